"""Time the splitk rung's splits and stages beside cuBLAS at the decode shapes.

    python benchmarks/tune/tune_splitk.py --library /tmp/wgmma_tune.so [--out tune.json]

The library is benchmarks/tune/wgmma_configs.cu built with plain nvcc (its header
gives the command). Each (splits, stages and k-boxes) is first checked against float64 at
M = 7, N = 1000, K = 4096 and M = 64, N = 4096, K = 4096 (linear layout, bf16), then
timed with the harness's kernel timer (median, L2 flushed: torch_memopt.bench.timing) at M in {1, 8, 16, 64},
N in {4096, 11008}, K = 4096, F.linear (cuBLAS) in the same run.
"""

from __future__ import annotations

import argparse
import ctypes
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

from torch_memopt.bench import results
from torch_memopt.bench.environment import describe
from torch_memopt.bench.timing import kernel_ms

SPLITS = (0, 2, 4, 8)  # 0: the launcher's rule
# (stages, k-boxes of 64 a stage) by launch_gemm_splitk_tuned's config number.
STAGE_CONFIGS = {0: (4, 1), 2: (4, 2), 3: (2, 4), 4: (3, 2), 5: (4, 4)}
CHECKS = ((7, 1000, 4096), (64, 4096, 4096))


def load(path: str) -> ctypes.CDLL:
    lib = ctypes.CDLL(path)
    lib.memopt_tune_splitk.argtypes = [ctypes.c_void_p, ctypes.c_long, ctypes.c_void_p,
                                       ctypes.c_long, ctypes.c_int, ctypes.c_void_p,
                                       ctypes.c_long, ctypes.c_long, ctypes.c_long, ctypes.c_int,
                                       ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
    return lib


def runner(lib, splits: int, stages: int):
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)

    def run(x, w, out):
        M, K = x.shape
        return lib.memopt_tune_splitk(x.data_ptr(), x.stride(0), w.data_ptr(), w.stride(0), 1,
                                      out.data_ptr(), M, w.shape[0], K,
                                      int(x.dtype == torch.bfloat16), splits, stages, stream)
    return run


def check(run) -> list[str]:
    failures = []
    for M, N, K in CHECKS:
        x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
        out = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        rc = run(x, w, out)
        torch.cuda.synchronize()
        ref = x.double() @ w.double().t()
        err = ((out.double() - ref).norm() / ref.norm()).item()
        if rc != 0 or not err < 1e-2:
            failures.append(f"{M}x{N}x{K}: rc {rc}, relative error {err:.2e}")
    return failures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", required=True)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    lib = load(args.library)
    configs = [(s, c) for c in STAGE_CONFIGS for s in SPLITS]
    good = []
    for splits, stages in configs:
        failures = check(runner(lib, splits, stages))
        print(f"splits {splits} (stages, boxes) {STAGE_CONFIGS[stages]}: "
              f"{'correct' if not failures else 'WRONG'}", flush=True)
        for line in failures:
            print(f"  {line}", flush=True)
        if not failures:
            good.append((splits, stages))
    records = []
    for N in (4096, 11008):
        for M in (1, 8, 16, 64):
            K = 4096
            x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
            w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
            out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
            cublas_ms = kernel_ms(lambda: F.linear(x, w))
            line = [f"M={M:2d} N={N:5d} cuBLAS {cublas_ms * 1e3:6.1f} us"]
            for splits, stages in good:
                run = runner(lib, splits, stages)
                ms = kernel_ms(lambda: run(x, w, out))
                records.append({"M": M, "N": N, "K": K, "splits": splits,
                                "stages_boxes": STAGE_CONFIGS[stages],
                                "ms": ms, "cublas_ms": cublas_ms, "vs_cublas": cublas_ms / ms,
                                "pct_copy_4249": 100 * 2 * N * K / ms / 1e9 / 4249})
                line.append(f"{splits}/{stages}:{cublas_ms / ms:.2f}")
            line.append(f"best {cublas_ms / min(r['ms'] for r in records[-len(good):]):.2f}")
            print("  ".join(line), flush=True)
    if args.out:
        meta = describe(torch.device("cuda"))
        document = {"meta": meta, "configs": good, "records": records}
        results.write(Path(args.out), results.json_safe(document))
    return 0 if len(good) == len(configs) else 1


if __name__ == "__main__":
    sys.exit(main())
