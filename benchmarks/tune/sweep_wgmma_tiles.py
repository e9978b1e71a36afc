"""Sweep the wgmma rung's output tiles (every one the build has, _C._wgmma_tiles(): 128 x 256
down to 64 x 64, 128 x 168 among them: the sweep is linear's layout, for which every tile is
built) beside wgmma_split,
splitk and cuBLAS at the linear layers of Llama-3-8B and Llama-2-7B: the measurements
behind gemm_plan's tile rule (csrc/gemm/gemm_plan.cpp, wgmma_tile).

    python benchmarks/tune/sweep_wgmma_tiles.py \
        [--out benchmarks/results/tune/wgmma_tiles_h200.json]

bfloat16, linear layout (weight [N, K]), M in {16, 64, 128, 256, 512, 1024, 2048}.
--encoders: the hidden-768 layers of BERT-base, GPT-2 small and ViT-B/16 instead (K = 768
and 3072, their MLM head / LM head), at the e2e suite's 8 x 512 tokens and 8 x 197.
--bias: every call with a bias (cuBLAS's too), as the models' nn.Linear layers run.
--activation gelu|gelu_tanh|relu|silu: every call with that epilogue; the peer is then cuBLAS
followed by the torch activation (BERT's up-projection, fused by optimize_, against eager's two
kernels).
--streamk: also the wgmma_streamk rung at its two tiles (128 x 256, 128 x 128). Every
config is checked against float64 first (relative error < 1e-2) and a wrong one is
never timed. Times: the harness's kernel timer (median, L2 flushed). The table printed
last gives, per shape, the best config, the rule's pick (auto) and how far the pick is
from the best, and cuBLAS.
"""

from __future__ import annotations

import argparse
import sys

import torch
import torch.nn.functional as F

import torch_memopt
from torch_memopt import _C
from torch_memopt.bench import results
from torch_memopt.bench.calls import ACTIVATIONS  # each epilogue's torch function
from torch_memopt.bench.environment import describe
from torch_memopt.bench.suites.transformer_gemm import LAYERS
from torch_memopt.bench.timing import kernel_ms

TOKENS = (16, 64, 128, 256, 512, 1024, 2048)
# (N, K) of the hidden-768 models: q/k/v/o, fused qkv, MLP up and down, BERT's MLM
# decoder; M: the e2e suite's prefill (8 x 512 tokens, 8 ViT images x 197 patches).
ENCODER_SHAPES = ((768, 768), (2304, 768), (3072, 768), (768, 3072), (30522, 768))
ENCODER_TOKENS = (1576, 4096)
STREAMK_TILES = ((128, 256), (128, 128))
TILED = ("wgmma", "wgmma_streamk")  # the variants whose setting is a tile


def configs(M: int, streamk: bool = False) -> list[tuple[str, tuple]]:
    """(variant, setting): a wgmma / wgmma_streamk tile, a wgmma_split split count (0: the
    rule), or ()."""
    out = [("wgmma", tuple(tile)) for tile in _C._wgmma_tiles()] + [("wgmma_split", (0,))]
    if streamk:
        out += [("wgmma_streamk", tile) for tile in STREAMK_TILES]
    return ([("splitk", ())] if M <= 256 else []) + out + [("auto", ())]


def label(variant: str, setting: tuple) -> str:
    if variant in TILED:
        return f"{variant} {setting[0]}x{setting[1]}"
    return variant


def call_of(x, w, b, variant: str, setting: tuple, activation: str = "none"):
    def call():
        _C._set_wgmma_tile(*(setting if variant in TILED else (0, 0)))
        return torch_memopt.linear(x, w, b, activation=activation, variant=variant)
    return call


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None)
    parser.add_argument("--encoders", action="store_true",
                        help="the hidden-768 layers of BERT, GPT-2 and ViT at their e2e M")
    parser.add_argument("--streamk", action="store_true", help="also time wgmma_streamk")
    parser.add_argument("--tokens", type=int, nargs="*", default=None, help="M values to sweep")
    parser.add_argument("--bias", action="store_true", help="a bias on every call")
    parser.add_argument("--activation", default="none", choices=sorted(ACTIVATIONS),
                        help="the epilogue's activation on every call")
    parser.add_argument("--shapes", nargs="*", default=None, metavar="NxK",
                        help="(N, K) to sweep instead of the model layers, e.g. 1024x4096")
    args = parser.parse_args(argv)
    shapes = (ENCODER_SHAPES if args.encoders else sorted({(N, K) for _, _, N, K in LAYERS}))
    if args.shapes:
        shapes = [tuple(int(v) for v in shape.lower().split("x")) for shape in args.shapes]
    tokens = args.tokens or (ENCODER_TOKENS if args.encoders else TOKENS)
    records, wrong = [], []
    try:
        for M in tokens:
            for N, K in shapes:
                x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
                w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16) * K ** -0.5
                b = torch.randn(N, device="cuda", dtype=torch.bfloat16) if args.bias else None
                act = ACTIVATIONS[args.activation]
                ref = act(F.linear(x.double(), w.double(), None if b is None else b.double()))
                row = {"M": M, "N": N, "K": K, "bias": b is not None,
                       "activation": args.activation,
                       "cublas_us": kernel_ms(lambda: act(F.linear(x, w, b))) * 1e3, "us": {},
                       "plan": torch_memopt.gemm_plan(M, N, K)}
                for variant, setting in configs(M, args.streamk):
                    call = call_of(x, w, b, variant, setting, args.activation)
                    err = float((call().double() - ref).abs().max() / ref.abs().max())
                    name = label(variant, setting)
                    if not err < 1e-2:
                        wrong.append(f"{name} at {M}x{N}x{K}: relative error {err:.2e}")
                        continue
                    if variant == "wgmma_streamk" and not torch.equal(call(), call()):
                        wrong.append(f"{name} at {M}x{N}x{K}: two runs differ")
                        continue
                    row["us"][name] = kernel_ms(call) * 1e3
                _C._set_wgmma_tile(0, 0)
                records.append(row)
                print(f"M={M} N={N} K={K}: cuBLAS {row['cublas_us']:.1f} us; "
                      + ", ".join(f"{k} {v:.1f}" for k, v in row["us"].items()), flush=True)
    finally:
        _C._set_wgmma_tile(0, 0)
    print(f"\n{'M':>5} {'N':>6} {'K':>6} {'cuBLAS':>7} {'best':>18} {'us':>6} "
          f"{'auto (plan)':>26} {'us':>6} {'auto/best':>9} {'cuBLAS/auto':>11}")
    for r in records:
        best = min((k for k in r["us"] if k != "auto"), key=r["us"].get)
        auto = r["us"].get("auto", float("nan"))
        plan = r["plan"]
        pick = plan["variant"] + (f" {plan['tile'][0]}x{plan['tile'][1]}"
                                  if plan["variant"] == "wgmma" else "")
        print(f"{r['M']:5d} {r['N']:6d} {r['K']:6d} {r['cublas_us']:7.1f} {best:>18} "
              f"{r['us'][best]:6.1f} {pick:>26} {auto:6.1f} {auto / r['us'][best]:9.2f} "
              f"{r['cublas_us'] / auto:11.2f}")
    return results.finish_sweep(args.out, describe(torch.device("cuda")),
                                {"tokens": tokens, "records": records}, wrong)


if __name__ == "__main__":
    sys.exit(main())
