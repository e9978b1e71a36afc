"""gemv against splitk at decode rows (issue 16): auto takes splitk for M <= 32, but the
tensor-core suite at 1a1b5b8 had gemv 4-8% ahead of it at M = 1-16 (K = 4096). Times auto,
gemv, splitk and cuBLAS (F.linear) over the transformer-gemm suite's eight Llama layers,
K = 11008 and 14336 included, on the same inputs, with the harness's kernel timer (median,
L2 flushed, the GPU kept behind the host); each rung checked against float64 first.

    python benchmarks/tune/decode_rung_check.py [--tokens 1 8 16 32] [--dtype bf16]
        [--layers llama small] [--out x.json]

--layers small adds the narrower layers (GPT-2's hidden 768, a hidden-2048 Llama, Llama-3's
k/v projection), where gemv's grid is smaller and its split-K workspace comes in.

Prints a line a layer and M (µs, and each rung ÷ cuBLAS), then the geomean of each rung
÷ cuBLAS by M: the rule's input.
"""
from __future__ import annotations

import argparse
import math
from pathlib import Path

import torch
import torch.nn.functional as F

import torch_memopt
from torch_memopt.bench import results
from torch_memopt.bench.environment import describe
from torch_memopt.bench.suites.transformer_gemm import LAYERS
from torch_memopt.bench.timing import kernel_ms

RUNGS = ("auto", "gemv", "splitk")
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}
# bf16 keeps 8 mantissa bits: a relative Frobenius error of a few 1e-3 at these K.
TOLERANCE = 1e-2
# (model, layer, N, K) beyond the suite's eight: GPT-2 (hidden 768), a hidden-2048 Llama with
# grouped-query attention (the e2e suite's), Llama-3-8B's k/v projection.
SMALL_LAYERS = (
    ("gpt-2", "qkv", 2304, 768),
    ("gpt-2", "o", 768, 768),
    ("gpt-2", "fc", 3072, 768),
    ("gpt-2", "proj", 768, 3072),
    ("llama-h2048", "qkv", 3072, 2048),
    ("llama-h2048", "gate_up", 16384, 2048),
    ("llama-h2048", "down", 2048, 8192),
    ("llama-3-8b", "kv", 1024, 4096),
)
LAYER_SETS = {"llama": LAYERS, "small": SMALL_LAYERS}


def time_layer(M: int, N: int, K: int, dtype: torch.dtype) -> dict:
    x = torch.randn(M, K, device="cuda", dtype=dtype)
    w = torch.randn(N, K, device="cuda", dtype=dtype) * K ** -0.5
    ref = F.linear(x.double(), w.double())
    us = {}
    for rung in RUNGS:
        out = torch_memopt.linear(x, w, variant=rung)
        err = ((out.double() - ref).norm() / ref.norm()).item()
        if not err < TOLERANCE:
            raise SystemExit(f"{rung} at {M} x {N} x {K}: relative error {err:.2e}")
        us[rung] = kernel_ms(lambda rung=rung: torch_memopt.linear(x, w, variant=rung)) * 1e3
    us["cublas"] = kernel_ms(lambda: F.linear(x, w)) * 1e3
    return us


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, nargs="+", default=[1, 8, 16, 32])
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="bf16")
    parser.add_argument("--layers", choices=sorted(LAYER_SETS), nargs="+", default=["llama"])
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    dtype = DTYPES[args.dtype]
    layers = [row for name in args.layers for row in LAYER_SETS[name]]
    records = []
    for M in args.tokens:
        for model, layer, N, K in layers:
            us = time_layer(M, N, K, dtype)
            plan = torch_memopt.gemm_plan(M, N, K, dtype)["variant"]
            records.append({"model": model, "layer": layer, "M": M, "N": N, "K": K,
                            "dtype": args.dtype, "plan": plan, "us": us})
            ratios = "  ".join(f"{r} {us[r]:.1f} ({us['cublas'] / us[r]:.2f}x)" for r in RUNGS)
            print(f"M={M:>3} {model} {layer:<8} {N}x{K}: cuBLAS {us['cublas']:.1f}  {ratios}",
                  flush=True)
    for M in args.tokens:
        rows = [r for r in records if r["M"] == M]
        means = {rung: math.exp(sum(math.log(r["us"]["cublas"] / r["us"][rung]) for r in rows)
                                / len(rows)) for rung in RUNGS}
        print(f"M={M:>3} geomean x cuBLAS: " + "  ".join(f"{k} {v:.3f}" for k, v in means.items()))
    if args.out:
        results.write(Path(args.out), results.json_safe({"meta": describe(torch.device("cuda")),
                                                          "records": records}))


if __name__ == "__main__":
    main()
