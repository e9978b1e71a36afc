"""Where wgmma_split's time goes: its fixed cost (one k-tile a split: launch, partial
write, cluster syncs, the distributed-shared-memory reduction, the stores) against the
full call, for splits 1-8 at M = 128, N = 4096 (Llama o-proj), K = 64 x splits and K =
4096. Run with MEMOPT_WGMMA_VERBOSE=1 to print how many clusters of each size fit at once.

    MEMOPT_WGMMA_VERBOSE=1 python benchmarks/tune/probe_wgmma_split.py
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

import torch_memopt
from torch_memopt import _C
from torch_memopt.bench.timing import kernel_ms


def time_us(M, N, K, splits):
    x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
    _C._set_wgmma_splits(splits)
    try:
        return kernel_ms(lambda: torch_memopt.linear(x, w, variant="wgmma_split")) * 1e3
    finally:
        _C._set_wgmma_splits(0)


def main():
    M, N = 128, 4096
    x = torch.randn(M, 4096, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(N, 4096, device="cuda", dtype=torch.bfloat16)
    print(f"cuBLAS M={M} N={N} K=4096: {kernel_ms(lambda: F.linear(x, w)) * 1e3:.1f} us")
    for splits in range(1, 9):
        fixed = time_us(M, N, 64 * splits, splits)
        four = time_us(M, N, 4 * 64 * splits, splits)
        full = time_us(M, N, 4096, splits)
        print(f"splits {splits}: 1 k-tile each {fixed:6.1f} us, 4 k-tiles each {four:6.1f} us, "
              f"K=4096 ({-(-64 // splits)} k-tiles each) {full:6.1f} us", flush=True)


if __name__ == "__main__":
    main()
