"""The bfloat16 / float16 tensor-core GEMM: ``auto`` and each rung that applies (``mma``,
``wgmma``, ``gemv``, ``splitk``) beside cuBLAS, on the same inputs.

Shapes (M×N×K): 4096³ and 8192³ as gemm (``torch.mm(a [M, K], b [K, N])``); 8192×4096×4096
and 8192×11008×4096 (a LLaMA-7B MLP up-projection) as linear with a bias; 4095³ and
4097×4096×4100 (tails in M and K, K % 8 = 4: TMA needs the aligned copy) as gemm; decode
shapes M in {1, 8, 16, 64} with N = K = 4096 and N = 11008, K = 4096 as linear. Rungs:
``wgmma`` above M = 64, ``splitk`` and ``gemv`` at or below it, ``mma`` everywhere. At
the decode shapes the weights bound the call: % copy is the compulsory bytes
(weights, mostly) over the time against the run's device-to-device copy.
"""
from __future__ import annotations

import torch

from ..calls import matmul_shape
from ..case import make_case

NAME = "tensor-core"
TITLE = "the bf16 / fp16 tensor-core GEMM rungs beside cuBLAS"
ABOUT = (
    "The bfloat16 / float16 tensor-core GEMM: `auto` and each rung (`mma`, `wgmma`, `gemv`, "
    "`splitk`) against cuBLAS (`torch.mm` / `F.linear`) on the same inputs, square, "
    "linear + bias, odd and decode shapes.")

SKINNY_MAX_M = 64  # auto takes splitk (Hopper) or gemv at or below this M
WIDE_RUNGS = ("auto", "wgmma", "mma")
SKINNY_RUNGS = ("auto", "splitk", "gemv", "mma")


def _skinny(n: int, k: int) -> list[tuple]:
    return [("decode", "linear", (m, n, k), False) for m in (1, 8, 16, 64)]


# (group, op, (M, N, K), bias)
FULL = [
    ("square", "gemm", (4096, 4096, 4096), False),
    ("square", "gemm", (8192, 8192, 8192), False),
    ("linear+bias", "linear", (8192, 4096, 4096), True),
    ("linear+bias", "linear", (8192, 11008, 4096), True),
    ("odd", "gemm", (4095, 4095, 4095), False),
    ("odd", "gemm", (4097, 4096, 4100), False),
    *_skinny(4096, 4096),
    *_skinny(11008, 4096),
]
QUICK = [FULL[0], FULL[4], ("decode", "linear", (1, 4096, 4096), False),
         ("decode", "linear", (1, 11008, 4096), False)]
CPU = [("square", "gemm", (64, 64, 64), False), ("decode", "linear", (1, 128, 128), False)]
DTYPES = [torch.bfloat16, torch.float16]
LAYOUT = "cases"  # a row a shape, every rung's µs side by side


def cases(ctx) -> list:
    table = (QUICK if ctx.quick else FULL) if ctx.cuda else CPU
    peers = ctx.pick_peers(["cublas", "eager"])  # eager: the CPU's matmul
    out = []
    for dtype in ctx.pick_dtypes(DTYPES):
        for group, op, dims, bias in table:
            if not ctx.wants_op(op):
                continue
            rungs = SKINNY_RUNGS if dims[0] <= SKINNY_MAX_M else WIDE_RUNGS
            out.append(make_case(NAME, op, dtype, matmul_shape(*dims), device=ctx.device,
                                 variants=ctx.pick_variants(op, list(rungs)), peer_names=peers,
                                 options={"bias": bias}, label=group, extra={"group": group}))
    return out
