"""Sweep wgmma_split's K splits (1-8) beside wgmma, splitk and cuBLAS at the linear
layers of Llama-3-8B and Llama-2-7B: the measurements behind gemm_plan's split rule.

    python benchmarks/tune/sweep_wgmma_split.py [--out benchmarks/results/tune/wgmma_split_h200.json]

bfloat16, linear layout (weight [N, K]), M in {16, 64, 128, 256, 512, 1024, 2048}. Every
config is checked against float64 first (relative error < 1e-2) and a wrong one is
never timed. Times: the harness's kernel timer (median, L2 flushed). The table printed
last gives, per shape, the best config, the rule's pick (auto) and how far the pick is
from the best.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

import torch_memopt
from torch_memopt import _C
from torch_memopt.bench import results
from torch_memopt.bench.environment import describe
from torch_memopt.bench.suites.transformer_gemm import LAYERS
from torch_memopt.bench.timing import kernel_ms

TOKENS = (16, 64, 128, 256, 512, 1024, 2048)
SPLITS = tuple(range(1, 9))


def configs(M: int) -> list[tuple[str, int]]:
    """(variant, splits): splits 0 for the rungs that take none."""
    out = [("wgmma", 0)] + [("wgmma_split", s) for s in SPLITS]
    return ([("splitk", 0)] if M <= 128 else []) + out + [("auto", 0)]


def call_of(x, w, variant: str, splits: int):
    def call():
        _C._set_wgmma_splits(splits)
        return torch_memopt.linear(x, w, variant=variant)
    return call


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    shapes = sorted({(N, K) for _, _, N, K in LAYERS})
    records, wrong = [], []
    for M in TOKENS:
        for N, K in shapes:
            x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
            w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16) * K ** -0.5
            ref = F.linear(x.double(), w.double())
            cublas_us = kernel_ms(lambda: F.linear(x, w)) * 1e3
            row = {"M": M, "N": N, "K": K, "cublas_us": cublas_us, "us": {},
                   "plan": torch_memopt.gemm_plan(M, N, K)}
            for variant, splits in configs(M):
                name = variant + (f"x{splits}" if splits else "")
                call = call_of(x, w, variant, splits)
                out = call()
                err = ((out.double() - ref).norm() / ref.norm()).item()
                if not err < 1e-2:
                    wrong.append(f"{M}x{N}x{K} {name}: relative error {err:.2e}")
                    continue
                row["us"][name] = kernel_ms(call) * 1e3
            _C._set_wgmma_splits(0)
            best = min((us, name) for name, us in row["us"].items() if name != "auto")
            row["best"], row["best_us"] = best[1], best[0]
            records.append(row)
            auto = row["us"].get("auto", float("nan"))
            print(f"M={M:5d} N={N:5d} K={K:5d}  cuBLAS {cublas_us:7.1f}  best {best[1]:>14s} "
                  f"{best[0]:7.1f} ({cublas_us / best[0]:.2f}x)  auto {row['plan']['variant']}"
                  f"x{row['plan']['splits']} {auto:7.1f} ({cublas_us / auto:.2f}x, "
                  f"{best[0] / auto:.2f} of best)", flush=True)
    for line in wrong:
        print("WRONG", line)
    if args.out:
        document = {"meta": describe(torch.device("cuda")), "tokens": TOKENS, "records": records,
                    "wrong": wrong}
        results.write(Path(args.out), results.json_safe(document))
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
