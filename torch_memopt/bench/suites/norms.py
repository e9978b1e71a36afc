"""LayerNorm, RMSNorm and last-dim softmax at the bandwidth limit: ``auto`` and every rung
beside eager, torch.compile and Liger-Kernel, float32 and bfloat16.

Shapes (rows×N): the norms at 32768×768, 32768×1024, 16384×4096, 8192×8192, 4096×12288
and 4096×1000; softmax at 32768×1024, 16384×4096, 4096×32768, 1024×131072, 1024×262144,
65536×197 and 32768×1000; decode rows 1, 8 and 64 × 4096 for all three (judge those in
µs: launch and tail effects, not HBM, bound them). GB/s counts input + output (+ weight
and bias) once; % copy is against the run's device-to-device copy.
"""
from __future__ import annotations

import torch

from ..calls import rows_shape
from ..case import make_case

NAME = "norms"
TITLE = "LayerNorm, RMSNorm and softmax against eager, torch.compile and Liger-Kernel"
ABOUT = (
    "LayerNorm, RMSNorm and last-dim softmax: `auto` and every rung against eager, "
    "torch.compile and Liger-Kernel on the same inputs, float32 and bfloat16, with the "
    "device-to-device copy as the bandwidth ceiling.")

OPS = ("layer_norm", "rms_norm", "softmax")
NORM_SHAPES = ((32768, 768), (32768, 1024), (16384, 4096), (8192, 8192), (4096, 12288), (4096, 1000))
SOFTMAX_SHAPES = ((32768, 1024), (16384, 4096), (4096, 32768), (1024, 131072), (1024, 262144),
                  (65536, 197), (32768, 1000))
DECODE_ROWS, DECODE_N = (1, 8, 64), 4096
QUICK = {"layer_norm": [(16384, 4096)], "rms_norm": [(16384, 4096), (1, 4096)],
         "softmax": [(16384, 4096)]}
CPU = {"layer_norm": [(255, 1000)], "rms_norm": [(255, 1000), (1, 4096)], "softmax": [(255, 1000)]}
DTYPES = [torch.float32, torch.bfloat16]
LAYOUT = "cases"  # a row a shape, every rung's µs side by side


def shapes(op: str, ctx) -> list[tuple[int, int]]:
    if not ctx.cuda:
        return CPU[op]
    if ctx.quick:
        return QUICK[op]
    base = SOFTMAX_SHAPES if op == "softmax" else NORM_SHAPES
    return list(base) + [(rows, DECODE_N) for rows in DECODE_ROWS]


def cases(ctx) -> list:
    peers = ctx.pick_peers(["eager", "compile", "liger"])
    out = []
    for dtype in ctx.pick_dtypes(DTYPES):
        for op in OPS:
            if not ctx.wants_op(op):
                continue
            for rows, n in shapes(op, ctx):
                label = "decode" if rows in DECODE_ROWS and n == DECODE_N else ""
                out.append(make_case(NAME, op, dtype, rows_shape(rows, n), device=ctx.device,
                                     variants=ctx.pick_variants(op, ["all"]), peer_names=peers,
                                     label=label))
    return out
