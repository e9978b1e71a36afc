"""Each op against its stock PyTorch op, in every dtype, at a few large square-ish shapes:
gemm at 1024³-4096³ and the odd 4095³ (no dimension a multiple of any tile, where cuBLAS
is weak: ANCHORS.md), linear with a bias, the norms and fused add + norms at transformer
widths (1024, 4096, 12288), softmax up to one 131072-wide row. The peer is the stock op
alone (cuBLAS for the matmuls, TF32 off in fp32; eager for the rest): the models suite
adds torch.compile and Liger-Kernel. Without a GPU: tiny shapes, the CPU kernels.
"""
from __future__ import annotations

import torch

from ..calls import OPS, matmul_shape, rows_shape
from ..case import make_case

NAME = "ops"
TITLE = "each op against its stock op, every dtype"
ABOUT = ("Each op's `auto` against the stock PyTorch op alone (cuBLAS with TF32 off for the "
         "matmuls, eager for the rest), float32, float16 and bfloat16, at large shapes.")

_CUDA = {
    "gemm": [(1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (4095, 4095, 4095)],
    "linear": [(4096, 4096, 1024), (8192, 4096, 4096)],
    "norm": [(32768, 1024), (16384, 4096), (4096, 12288)],
    "softmax": [(32768, 1024), (16384, 4096), (1024, 131072)],
}
_CUDA_QUICK = {"gemm": [(1024, 1024, 1024), (2048, 2048, 2048)], "linear": [(4096, 1024, 1024)],
               "norm": [(4096, 1024), (8192, 4096)], "softmax": [(4096, 1024), (8192, 4096)]}
_CPU = {"gemm": [(128, 128, 128), (256, 256, 256), (127, 129, 131)],
        "linear": [(256, 256, 256), (255, 129, 128)],
        "norm": [(256, 1024), (1024, 1024), (255, 1000)],
        "softmax": [(256, 1024), (1024, 1024), (255, 1000)]}
_CPU_QUICK = {"gemm": [(128, 128, 128)], "linear": [(128, 128, 128)], "norm": [(256, 1024)],
              "softmax": [(256, 1024)]}
DTYPES = [torch.float32, torch.float16, torch.bfloat16]


def shapes(op: str, table: dict) -> list[dict]:
    if op in ("gemm", "linear"):
        return [matmul_shape(*dims) for dims in table[op]]
    return [rows_shape(*dims) for dims in table["softmax" if op == "softmax" else "norm"]]


def cases(ctx) -> list:
    table = (_CUDA_QUICK if ctx.quick else _CUDA) if ctx.cuda else (_CPU_QUICK if ctx.quick else _CPU)
    stock = ["cublas", "eager"]  # each where it has the op: cuBLAS for CUDA matmuls
    out = []
    for op in OPS:
        if not ctx.wants_op(op):
            continue
        options = {"bias": True} if op == "linear" else {}
        for dtype in ctx.pick_dtypes(DTYPES):
            for shape in shapes(op, table):
                out.append(make_case(NAME, op, dtype, shape, device=ctx.device,
                                     variants=ctx.pick_variants(op), peer_names=ctx.pick_peers(stock),
                                     options=options))
    return out
