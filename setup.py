"""Build torch_memopt._C: the memopt ops' CPU kernels always, their CUDA kernels
whenever nvcc is found.

Whether CUDA is compiled is decided by the toolkit, never by
torch.cuda.is_available(): CI has nvcc but no GPU and must still compile every
.cu file. Environment:
  MEMOPT_CPU_ONLY=1        build without CUDA even when nvcc is present
  TORCH_CUDA_ARCH_LIST     GPU targets (default "9.0a": sm_90a, needed by wgmma/setmaxnreg)
  MAX_JOBS                 parallel compile jobs (torch's ninja build honours it)
  CUDA_HOME                the toolkit, when nvcc is not found on its own
  MEMOPT_BUILD_TEMP        where the objects are kept (default build/temp; the device's
                           prebuild keeps its own: scripts/prebuild_for_device.sh)
"""

import glob
import os
import shutil
import sys

from setuptools import setup

ROOT = os.path.dirname(os.path.abspath(__file__))
CSRC = os.path.join(ROOT, "csrc")


def find_cuda_home():
    """The CUDA toolkit folder (holding bin/nvcc and include/cuda_runtime.h), or None.

    /usr/local/bin/nvcc may be a wrapper script, so its folder is not trusted
    as the toolkit root unless the headers are there too.
    """
    candidates = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        candidates.append(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))))
    candidates += ["/usr/local/cuda"] + sorted(glob.glob("/usr/local/cuda-*"), reverse=True)
    for home in candidates:
        if home and os.path.isfile(os.path.join(home, "bin", "nvcc")) and os.path.isfile(
            os.path.join(home, "include", "cuda_runtime.h")
        ):
            return home
    return None


def wheel_cuda_include_dirs(cuda_home):
    """Headers torch's CUDA headers need (cuBLAS, cuSPARSE, ...) that a minimal
    system toolkit may lack; the nvidia-* wheels installed beside torch carry them."""
    if os.path.isfile(os.path.join(cuda_home, "include", "cusparse.h")):
        return []
    dirs = []
    for site in sys.path:
        for inc in sorted(glob.glob(os.path.join(site, "nvidia", "cu*", "include"))):
            if os.path.isfile(os.path.join(inc, "cusparse.h")):
                dirs.append(inc)
    return dirs[:1]


def sources(patterns):
    files = []
    for pattern in patterns:
        files += glob.glob(os.path.join(CSRC, pattern), recursive=True)
    return sorted(os.path.relpath(f, ROOT) for f in files if "/tests/" not in f)


def build_extension():
    cuda_home = None if os.environ.get("MEMOPT_CPU_ONLY") == "1" else find_cuda_home()
    if cuda_home:
        os.environ["CUDA_HOME"] = cuda_home  # read by cpp_extension at import
        os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0a")
    from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension

    cxx_flags = ["-O3"]  # the C++ standard is torch's own choice (C++20 since 2.13)
    cpp_sources = sources(["**/*.cpp"])
    if not cuda_home:
        print("torch_memopt: building the CPU kernels only (no CUDA toolkit, or MEMOPT_CPU_ONLY=1)")
        ext = CppExtension("torch_memopt._C", cpp_sources, include_dirs=[CSRC],
                           extra_compile_args={"cxx": cxx_flags}, py_limited_api=False)
        return ext, BuildExtension
    cuda_sources = sources(["**/*.cu"])
    print(f"torch_memopt: building with CUDA from {cuda_home} for "
          f"TORCH_CUDA_ARCH_LIST={os.environ['TORCH_CUDA_ARCH_LIST']}: {len(cuda_sources)} .cu files")
    nvcc_flags = ["-O3", "--expt-relaxed-constexpr", "-lineinfo",
                  "-DMEMOPT_WITH_CUDA=1"]
    ext = CUDAExtension(
        "torch_memopt._C",
        cpp_sources + cuda_sources,
        include_dirs=[CSRC] + wheel_cuda_include_dirs(cuda_home),
        extra_compile_args={"cxx": cxx_flags + ["-DMEMOPT_WITH_CUDA=1"], "nvcc": nvcc_flags},
    )
    return ext, BuildExtension


def persistent_build_ext(build_ext):
    """build_ext with its objects kept in build/temp across installs.

    pip's editable install (setuptools' editable_wheel) points build_temp at a
    fresh temporary folder each time, so a second `pip install -e .` on an
    unchanged tree recompiled every .cu file: on CI's two cores that was 975 s
    of the README's second command, after the first had built the same objects.
    In a fixed folder ninja sees they are up to date (it tracks each object's
    headers too) and only relinks.
    """
    class PersistentBuildExt(build_ext.with_options(use_ninja=True)):
        def finalize_options(self):
            super().finalize_options()
            self.build_temp = (os.environ.get("MEMOPT_BUILD_TEMP")
                               or os.path.join(ROOT, "build", "temp"))

    return PersistentBuildExt


extension, build_ext = build_extension()
setup(ext_modules=[extension], cmdclass={"build_ext": persistent_build_ext(build_ext)})
