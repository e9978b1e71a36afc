"""The fp32 SIMT rung (warptiled) in linear's layout (weight [N, K]: B column-major)
beside its gemm layout (B row-major) and cuBLAS without tf32, at 4096^3 and on both
sides of the row-major copy that run_fp32_rung makes from M = 512 (csrc/gemm/gemm_cuda.cu).

    python benchmarks/tune/fp32_linear_check.py [--out fp32_linear.json]
"""
from __future__ import annotations

import argparse
import json
import sys

import torch
import torch.nn.functional as F

import torch_memopt
from torch_memopt.bench.calls import relative_error
from torch_memopt.bench.timing import kernel_ms

SHAPES = [(4096, 4096, 4096), (2048, 4096, 4096), (1024, 4096, 4096), (1023, 4096, 4096),
          (512, 4096, 4096), (511, 4096, 4096), (8192, 8192, 8192)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    torch.backends.cuda.matmul.allow_tf32 = False
    rows, bad = [], 0
    for M, N, K in SHAPES:
        x = torch.randn(M, K, device="cuda")
        w = torch.randn(N, K, device="cuda") * K ** -0.5
        b = w.t().contiguous()
        ref = torch.mm(x.double(), b.double())
        calls = {"linear": lambda: torch_memopt.linear(x, w, variant="warptiled"),
                 "gemm": lambda: torch_memopt.gemm(x, b, variant="warptiled"),
                 "cuBLAS linear": lambda: F.linear(x, w)}
        row = {"M": M, "N": N, "K": K, "us": {}, "rel_err": {}}
        for name, call in calls.items():
            row["rel_err"][name] = relative_error(call(), ref)
            bad += not row["rel_err"][name] < 1e-5
            row["us"][name] = kernel_ms(call) * 1e3
        rows.append(row)
        us = row["us"]
        print(f"{M:5d}x{N:5d}x{K:5d}: linear {us['linear']:8.1f} us "
              f"(x{us['cuBLAS linear'] / us['linear']:.2f} cuBLAS), gemm layout {us['gemm']:8.1f} "
              f"(x{us['cuBLAS linear'] / us['gemm']:.2f}), cuBLAS {us['cuBLAS linear']:8.1f}",
              flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "records": rows}, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
