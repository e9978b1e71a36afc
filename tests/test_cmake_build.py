"""The LibTorch build: CMakeLists.txt compiles the same csrc/ as setup.py into
libmemopt_ops.so, ctest runs the C++ dispatcher test against it, and Python can
load it with torch.ops.load_library.

CUDA is compiled whenever nvcc is found (CUDA_HOME, PATH or /usr/local/cuda), as
in setup.py, even without a GPU; MEMOPT_CPU_ONLY=1 builds the CPU kernels only.
The build takes minutes on 2 cores: deselect it with `-m "not cmake"`. Skipped
only when cmake itself is missing. Each phase's time is written to the terminal.
"""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

pytestmark = pytest.mark.cmake

ROOT = Path(__file__).resolve().parent.parent
CMAKE = shutil.which("cmake")
BUILD_TIMEOUT_S = 3600
OUTPUT_TAIL_CHARS = 8000


def find_nvcc():
    """The nvcc setup.py would use, or None."""
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")):
        if home and os.path.isfile(os.path.join(home, "bin", "nvcc")):
            return os.path.join(home, "bin", "nvcc")
    if shutil.which("nvcc"):
        return shutil.which("nvcc")
    if os.path.isfile("/usr/local/cuda/bin/nvcc"):
        return "/usr/local/cuda/bin/nvcc"
    return None


def configure_args(build_dir: Path):
    args = [
        CMAKE, "-S", str(ROOT), "-B", str(build_dir),
        "-G", "Ninja" if shutil.which("ninja") else "Unix Makefiles",
        f"-DCMAKE_PREFIX_PATH={torch.utils.cmake_prefix_path}",
    ]
    nvcc = None if os.environ.get("MEMOPT_CPU_ONLY") == "1" else find_nvcc()
    if nvcc:
        # Explicit, so a toolkit CMake fails to use is an error, not a CPU-only build.
        args += ["-DMEMOPT_WITH_CUDA=ON", f"-DCMAKE_CUDA_COMPILER={nvcc}"]
    else:
        args += ["-DMEMOPT_WITH_CUDA=OFF"]
    if shutil.which("ccache"):
        args += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_CUDA_COMPILER_LAUNCHER=ccache"]
    return args


def say(config, line):
    """Writes past pytest's output capture, so CI logs show the timings."""
    capture = config.pluginmanager.get_plugin("capturemanager")
    if capture is None:
        print(line, flush=True)
        return
    with capture.global_and_fixture_disabled():
        print(f"\n{line} ", end="", flush=True)


def run_step(config, name, cmd, cwd):
    """Runs one phase, reports its time, and fails with its output if it fails."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=BUILD_TIMEOUT_S)
    seconds = time.perf_counter() - start
    say(config, f"[cmake build] {name}: {seconds:.1f} s (exit {proc.returncode})")
    if proc.returncode != 0:
        pytest.fail(f"{name} failed (exit {proc.returncode}): {' '.join(map(str, cmd))}\n"
                    f"{proc.stdout[-OUTPUT_TAIL_CHARS:]}", pytrace=False)
    return proc.stdout


# In a fresh interpreter: this pytest process already holds the memopt namespace
# through torch_memopt._C, and a second TORCH_LIBRARY(memopt) would be refused.
LOAD_AND_CALL = """
import sys
import torch

library, built_with_cuda = sys.argv[1], sys.argv[2] == "ON"
torch.ops.load_library(library)
torch.manual_seed(0)
a, b = torch.randn(37, 53), torch.randn(53, 29)  # no dimension a multiple of a tile
expected = torch.mm(a.double(), b.double())
torch.testing.assert_close(torch.ops.memopt.gemm(a, b).double(), expected, rtol=1e-4, atol=1e-4)
has_cuda_kernel = torch._C._dispatch_has_kernel_for_dispatch_key("memopt::gemm", "CUDA")
assert has_cuda_kernel == built_with_cuda, (
    f"memopt::gemm CUDA kernel registered: {has_cuda_kernel}, MEMOPT_WITH_CUDA={built_with_cuda}")
if built_with_cuda and torch.cuda.is_available():
    out = torch.ops.memopt.gemm(a.cuda(), b.cuda())
    torch.testing.assert_close(out.cpu().double(), expected, rtol=1e-4, atol=1e-4)
    print("gemm checked on", torch.cuda.get_device_name())
print("gemm checked on cpu")
"""


def cache_value(build_dir: Path, name: str) -> str:
    for line in (build_dir / "CMakeCache.txt").read_text().splitlines():
        if line.startswith(name + ":"):
            return line.split("=", 1)[1]
    raise KeyError(f"{name} not in {build_dir / 'CMakeCache.txt'}")


# One test, not one per phase: under pytest-xdist, tests sharing a build fixture
# can land on different workers and build twice.
def test_cmake_build_ctest_and_load_library(request, tmp_path):
    if CMAKE is None:
        pytest.skip("cmake is not on PATH (pip install cmake ninja): "
                    "the LibTorch build is untested")
    config = request.config
    build_dir = tmp_path / "build"
    jobs = int(os.environ.get("MAX_JOBS") or os.cpu_count() or 1)

    run_step(config, "configure", configure_args(build_dir), ROOT)
    run_step(config, f"build -j{jobs}", [CMAKE, "--build", str(build_dir), "-j", str(jobs)], ROOT)

    # The ctest beside the cmake that configured, not another one on PATH.
    ctest = Path(CMAKE).with_name("ctest")
    ctest = str(ctest) if ctest.is_file() else shutil.which("ctest")
    output = run_step(config, "ctest", [ctest, "--output-on-failure"], build_dir)
    assert "test_dispatcher" in output and "100% tests passed" in output, output

    library = build_dir / "libmemopt_ops.so"
    assert library.is_file(), f"the build made no {library}"
    built_with_cuda = cache_value(build_dir, "MEMOPT_WITH_CUDA")
    output = run_step(config, "torch.ops.load_library + memopt.gemm",
                      [sys.executable, "-c", LOAD_AND_CALL, str(library), built_with_cuda],
                      build_dir)
    assert "gemm checked on cpu" in output, output
