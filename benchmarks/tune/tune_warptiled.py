"""Time the candidate shapes of the warptiled rung beside cuBLAS, on one GPU.

    python benchmarks/tune/tune_warptiled.py [--sizes 4096,8192] [--out tune.json]

Builds benchmarks/tune/warptiled_configs.cu with plain nvcc (no torch headers:
about a minute) into a shared library, loads it with ctypes, checks every
candidate against float64 once per size, then times each and cuBLAS (torch.mm,
TF32 off) with the harness's kernel timer (median, L2 flushed: torch_memopt.bench.timing).
The winner goes into warptiled::Tuned in csrc/gemm/kernels/v08_warptiled.cuh,
with its figure in docs/perf-notes.md.
"""

from __future__ import annotations

import argparse
import ctypes
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

from torch_memopt.bench import results
from torch_memopt.bench.environment import describe
from torch_memopt.bench.timing import kernel_ms

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "benchmarks" / "tune" / "warptiled_configs.cu"


def load(library: Path, prebuilt: bool) -> ctypes.CDLL:
    if not prebuilt:
        build(library)
    lib = ctypes.CDLL(str(library))
    lib.memopt_tune_name.restype = ctypes.c_char_p
    lib.memopt_tune_run.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                    ctypes.c_long, ctypes.c_long, ctypes.c_long, ctypes.c_int,
                                    ctypes.c_void_p]
    return lib


def build(library: Path) -> None:
    cmd = ["nvcc", "-gencode=arch=compute_90a,code=sm_90a", "-O3", "-std=c++17",
           "--expt-relaxed-constexpr", f"-I{ROOT / 'csrc'}", "-shared", "-Xcompiler", "-fPIC",
           str(SOURCE), "-o", str(library)]
    subprocess.run(cmd, check=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="4096,8192")
    parser.add_argument("--out", default=None)
    parser.add_argument("--library", default=None,
                        help="a warptiled_configs .so built beforehand (skips the nvcc step)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        lib = load(Path(args.library) if args.library else Path(tmp) / "tune.so",
                   prebuilt=args.library is not None)
        names = [lib.memopt_tune_name(i).decode() for i in range(lib.memopt_tune_count())]
        records = []
        torch.backends.cuda.matmul.allow_tf32 = False
        for size in (int(s) for s in args.sizes.split(",")):
            M = N = K = size
            flop = 2 * M * N * K
            a = torch.randn(M, K, device="cuda")
            b = torch.randn(K, N, device="cuda")
            w = torch.randn(N, K, device="cuda")
            out = torch.empty(M, N, device="cuda")
            stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
            cublas_ms = kernel_ms(lambda: torch.mm(a, b))
            ref = torch.mm(a.double(), b.double())
            ref_w = torch.mm(a.double(), w.double().t())
            print(f"{size}^3 cuBLAS {cublas_ms:.3f} ms = {flop / cublas_ms / 1e9:.1f} TFLOP/s", flush=True)
            for i, name in enumerate(names):
                for col_major, src, expect in ((0, b, ref), (1, w, ref_w)):
                    run = lambda: lib.memopt_tune_run(i, a.data_ptr(), src.data_ptr(), out.data_ptr(),
                                                      M, N, K, col_major, stream)
                    assert run() == 0, f"launch failed: {name}"
                    err = (torch.linalg.vector_norm(out.double() - expect) /
                           torch.linalg.vector_norm(expect)).item()
                    ms = kernel_ms(run)
                    rec = {"size": size, "config": name, "b": "col" if col_major else "row",
                           "ms": ms, "tflops": flop / ms / 1e9, "cublas_ms": cublas_ms,
                           "vs_cublas": cublas_ms / ms, "rel_err": err}
                    records.append(rec)
                    print(f"  {name:22s} b={rec['b']}  {ms:7.3f} ms  {rec['tflops']:5.1f} TFLOP/s  "
                          f"{rec['vs_cublas']:.3f}x cuBLAS  err {err:.1e}", flush=True)
    if args.out:
        meta = describe(torch.device("cuda"))
        results.write(Path(args.out), results.json_safe({"meta": meta, "records": records}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
