"""The fused residual add + norm: ``add_rms_norm`` / ``add_layer_norm`` (one pass: read
input and residual, write the sum and the normalized output) against the two stock
calls they replace, ``s = x + r`` then ``F.rms_norm(s)`` / ``F.layer_norm(s)``, eager and
under torch.compile (which fuses the pair itself: the peer to beat), and Liger-Kernel's
fused add + RMSNorm. The fused op makes 4 accesses an element where eager makes 5 (the
add reads 2 and writes 1, the norm reads 1 and writes 1): at equal GB/s, 1.25× eager.
GB/s counts the 4 accesses (+ the weights) for every implementation: the work, not what
each moves.
"""
from __future__ import annotations

import torch

from ..calls import rows_shape
from ..case import make_case

NAME = "add-norm"
TITLE = "the fused residual add + norm against the stock pair"
ABOUT = (
    "The fused residual add + norm: `add_rms_norm` / `add_layer_norm` against the two stock "
    "calls they replace, `s = x + r` then `F.rms_norm(s)` / `F.layer_norm(s)`, eager and "
    "under torch.compile, and Liger-Kernel's fused add + RMSNorm, on the same inputs.")

OPS = ("add_rms_norm", "add_layer_norm")
SHAPES = ((8192, 4096), (16384, 4096), (4096, 8192), (32768, 1024))
QUICK_SHAPES = ((16384, 4096),)
CPU_SHAPES = ((255, 1000),)
DTYPES = [torch.float32, torch.bfloat16]


def cases(ctx) -> list:
    shapes = (QUICK_SHAPES if ctx.quick else SHAPES) if ctx.cuda else CPU_SHAPES
    peers = ctx.pick_peers(["eager", "compile", "liger"])
    return [make_case(NAME, op, dtype, rows_shape(rows, n), device=ctx.device,
                      variants=ctx.pick_variants(op), peer_names=peers, options={"eps": 1e-5})
            for op in OPS if ctx.wants_op(op)
            for dtype in ctx.pick_dtypes(DTYPES)
            for rows, n in shapes]
