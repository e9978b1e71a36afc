"""wgmma_tf32 beside cuBLAS's tf32 (torch.mm / F.linear under allow_tf32) at the issue's
shapes: square 4096^3 and 8192^3 in both layouts, and Llama layers at M >= 1024. Each
shape is checked against float64 first (relative Frobenius error < 5e-3, tf32's order).

    python benchmarks/tune/tf32_check.py [--out tf32.json]
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

# (layout, M, N, K)
SHAPES = [("gemm", 4096, 4096, 4096), ("gemm", 8192, 8192, 8192),
          ("linear", 4096, 4096, 4096), ("linear", 8192, 8192, 8192),
          ("linear", 1024, 4096, 4096), ("linear", 1024, 6144, 4096),
          ("linear", 1024, 28672, 4096), ("linear", 1024, 4096, 14336),
          ("linear", 2048, 4096, 4096), ("linear", 2048, 12288, 4096),
          ("linear", 4096, 11008, 4096)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    torch.backends.cuda.matmul.allow_tf32 = True
    rows, bad = [], 0
    for layout, M, N, K in SHAPES:
        x = torch.randn(M, K, device="cuda")
        w = torch.randn(N, K, device="cuda") * K ** -0.5
        if layout == "gemm":
            b = w.t().contiguous()
            ours, peer = (lambda: torch_memopt.gemm(x, b)), (lambda: torch.mm(x, b))
        else:
            ours, peer = (lambda: torch_memopt.linear(x, w)), (lambda: F.linear(x, w))
        ref = torch.mm(x.double(), w.double().t())
        err, peer_err = relative_error(ours(), ref), relative_error(peer(), ref)
        plan = torch_memopt.gemm_plan(M, N, K, torch.float32)
        ours_us, peer_us = kernel_ms(ours) * 1e3, kernel_ms(peer) * 1e3
        bad += not err < 5e-3
        rows.append({"layout": layout, "M": M, "N": N, "K": K, "plan": plan, "ours_us": ours_us,
                     "cublas_tf32_us": peer_us, "rel_err": err, "cublas_rel_err": peer_err})
        print(f"{layout:6s} {M:5d}x{N:5d}x{K:5d} {plan['variant']} {plan['tile']}: ours "
              f"{ours_us:8.1f} us, cuBLAS tf32 {peer_us:8.1f} us, x{peer_us / ours_us:5.2f}; "
              f"rel err {err:.1e} (cuBLAS {peer_err:.1e})", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "records": rows}, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
