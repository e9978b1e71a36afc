"""Sweep the wgmma rung's tile order, the tile-rows of a group (_C._set_wgmma_group_rows;
kernels/tile_order.cuh), beside cuBLAS at the large-M linear layers of Llama-3-8B and
Llama-2-7B and at square shapes: the measurement behind gemm_plan's wgmma_group_rows.

    python benchmarks/tune/sweep_group_rows.py [--out benchmarks/results/tune/group_rows_h200.json]

Why it might matter: the persistent grid's resident blocks cover about group_rows x (SMs /
group_rows) tiles, and each reads its tile-row's strip of A and its tile-column's strip of
B over the whole of K. With 128 x 256 tiles and 8 rows, 132 blocks read 8 A strips and 16.5
B strips (1024 + 4224 = 5248 rows of K elements); with 16 rows, 16 and 8.25 (2048 + 2112 =
4160, 21% less). At long K (4096 x 4096 x 14336) no strip lives in L2 from one wave to the
next, so that is the DRAM and L2 traffic of every wave.

bfloat16, linear layout (weight [N, K]), M in {2048, 4096, 8192} (--tokens), the tile the
plan picks (auto). --tf32: float32 inputs under allow_tf32 at 4096^3 and 8192^3 too. Each
group size's output must equal group 8's bit for bit (the order moves whole tiles; it
changes no sum), and group 8's must be within 1e-2 of float64: a setting that fails is
never timed. Times: the harness's kernel timer (median, L2 flushed); cuBLAS timed before and
after the settings, its drift printed. The table printed last gives each shape's times a
setting over group 8's.
"""

from __future__ import annotations

import argparse
import math
import sys

import torch
import torch.nn.functional as F

import torch_memopt
from torch_memopt import _C
from torch_memopt.bench import results
from torch_memopt.bench.environment import describe
from torch_memopt.bench.suites.transformer_gemm import LAYERS
from torch_memopt.bench.timing import kernel_ms

TOKENS = (2048, 4096, 8192)
SQUARES = (4096, 8192)
GROUPS = (4, 8, 12, 16, 24, 32)
BASELINE = 8  # the rule's (gemm/group_rows.h)


def cases(tokens, tf32: bool) -> list[tuple[int, int, int, torch.dtype]]:
    layers = sorted({(N, K) for _, _, N, K in LAYERS})
    out = [(M, N, K, torch.bfloat16) for M in tokens for N, K in layers]
    out += [(S, S, S, torch.bfloat16) for S in SQUARES]
    if tf32:
        out += [(S, S, S, torch.float32) for S in SQUARES]
    return out


def sweep_case(M: int, N: int, K: int, dtype: torch.dtype, groups, wrong: list) -> dict:
    x = torch.randn(M, K, device="cuda", dtype=dtype)
    w = torch.randn(N, K, device="cuda", dtype=dtype) * K ** -0.5
    name = f"{M}x{N}x{K} {str(dtype).removeprefix('torch.')}"

    def ours(rows: int):
        def call():
            _C._set_wgmma_group_rows(rows)
            return torch_memopt.linear(x, w)
        return call

    baseline = ours(BASELINE)()
    ref = F.linear(x.double(), w.double())
    err = float((baseline.double() - ref).abs().max() / ref.abs().max())
    del ref
    row = {"M": M, "N": N, "K": K, "dtype": str(dtype).removeprefix("torch."),
           "plan": torch_memopt.gemm_plan(M, N, K, dtype=dtype), "rel_err": err, "us": {}}
    if not err < 1e-2:
        wrong.append(f"group {BASELINE} at {name}: relative error {err:.2e}")
        return row
    row["cublas_us"] = kernel_ms(lambda: F.linear(x, w)) * 1e3
    for rows in groups:
        call = ours(rows)
        if not torch.equal(call(), baseline):
            wrong.append(f"group {rows} at {name}: differs from group {BASELINE}")
            continue
        row["us"][str(rows)] = kernel_ms(call) * 1e3
    row["cublas_after_us"] = kernel_ms(lambda: F.linear(x, w)) * 1e3
    _C._set_wgmma_group_rows(0)
    print(f"{name}: cuBLAS {row['cublas_us']:.1f} / {row['cublas_after_us']:.1f} us; "
          + ", ".join(f"g{k} {v:.1f}" for k, v in row["us"].items()), flush=True)
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None)
    parser.add_argument("--tokens", type=int, nargs="*", default=None, help="M values to sweep")
    parser.add_argument("--groups", type=int, nargs="*", default=None,
                        help=f"tile-rows a group to time (default {GROUPS})")
    parser.add_argument("--tf32", action="store_true", help="also float32 (tf32) squares")
    args = parser.parse_args(argv)
    groups = tuple(args.groups or GROUPS)
    if BASELINE not in groups:
        groups = (BASELINE,) + groups
    torch.backends.cuda.matmul.allow_tf32 = True  # the tf32 cases; 16-bit ones ignore it
    records, wrong = [], []
    try:
        for M, N, K, dtype in cases(args.tokens or TOKENS, args.tf32):
            records.append(sweep_case(M, N, K, dtype, groups, wrong))
    finally:
        _C._set_wgmma_group_rows(0)
    print(f"\n{'M':>5} {'N':>6} {'K':>6} {'dtype':>8} {'tile':>8} {'cuBLAS':>7} {'g8':>7} "
          + " ".join(f"{f'g{g}/g8':>7}" for g in groups if g != BASELINE)
          + f" {'cuBLAS/g8':>9} {'cuBLAS/best':>11}")
    for r in records:
        if not r["us"]:
            continue
        base = r["us"][str(BASELINE)]
        best = min(r["us"].values())
        tile = "x".join(str(v) for v in r["plan"].get("tile", ())) or r["plan"]["variant"]
        print(f"{r['M']:5d} {r['N']:6d} {r['K']:6d} {r['dtype']:>8} {tile:>8} "
              f"{r['cublas_us']:7.1f} {base:7.1f} "
              + " ".join(f"{r['us'].get(str(g), math.nan) / base:7.3f}"
                         for g in groups if g != BASELINE)
              + f" {r['cublas_us'] / base:9.3f} {r['cublas_us'] / best:11.3f}")
    return results.finish_sweep(args.out, describe(torch.device("cuda")),
                                {"groups": groups, "records": records}, wrong)


if __name__ == "__main__":
    sys.exit(main())
