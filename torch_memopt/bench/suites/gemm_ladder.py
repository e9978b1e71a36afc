"""The FP32 GEMM ladder: every rung of ``memopt::gemm`` beside cuBLAS (TF32 off), with
the published ladder's claims beside ours.

Each rung adds one use of the memory hierarchy to the one below it
(csrc/gemm/kernels/v01_naive.cuh ... v08_warptiled.cuh). Sizes: 1024³-8192³, 8192×4096×4096
and 4095³ (no dimension a multiple of any tile: every tail path runs); --quick: 1024³ and
4096³. Figures: TFLOP/s, × naive (same size, same run) beside the claim, and the
kernels' registers and local memory (``torch_memopt.kernel_info``, from
``cudaFuncGetAttributes``) in the document's ``sections.kernels``.
"""
from __future__ import annotations

import torch

import torch_memopt

from ..calls import matmul_shape
from ..case import make_case
from ..report import Column, times

NAME = "gemm-ladder"
TITLE = "the fp32 GEMM ladder, rung by rung, beside cuBLAS and the published claims"
ABOUT = (
    "The FP32 GEMM ladder: every rung of `memopt::gemm` and cuBLAS (`torch.mm`, TF32 off) "
    "in one run, our speed-up over the naive rung beside the published ladder's claim "
    "(coalescing 1.8×, shared-memory tiles 3.2×, double buffering 4.5×, register "
    "accumulation and float4 6.1×); `auto` is the rung the heuristic picks.")

# Ladder order, bottom to top.
LADDER = ("naive", "coalesced", "smem_tiled", "smem_padded", "double_buffered",
          "register_blocked", "vectorized", "warptiled")
# The published ladder we start from (ANCHORS.md), speed-up over its naive kernel.
HALF_RUNGS = ("mma", "wgmma", "wgmma_split", "gemv", "splitk", "wgmma_streamk")
PUBLISHED_SPEEDUP = {"coalesced": 1.8, "smem_tiled": 3.2, "double_buffered": 4.5, "vectorized": 6.1}
SIZES = ((1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
         (8192, 4096, 4096), (4095, 4095, 4095))
QUICK_SIZES = ((1024, 1024, 1024), (4096, 4096, 4096))
CPU_SIZES = ((128, 128, 128), (127, 129, 131))
SUMMARY_VARIANT = "warptiled"  # the top rung; auto picks it at every size measured

COLUMNS = [
    Column("× naive", lambda r: times(r["extra"].get("speedup_vs_naive"))),
    Column("published × naive", lambda r: times(r["extra"].get("published_speedup_vs_naive"))),
]


def rungs(ctx) -> list[str]:
    """The fp32 rungs this build offers here, in ladder order (then others, such as the
    CPU's ``reference``), then ``auto``; the tensor-core rungs are the tensor-core suite's."""
    chosen = ctx.pick_variants("gemm", ["all"])
    ladder = [r for r in LADDER if r in chosen]
    others = [r for r in chosen if r not in LADDER and r not in HALF_RUNGS and r != "auto"]
    return ladder + others + (["auto"] if "auto" in chosen else [])


def cases(ctx) -> list:
    if not ctx.wants_op("gemm") or torch.float32 not in ctx.pick_dtypes([torch.float32]):
        return []
    sizes = (QUICK_SIZES if ctx.quick else SIZES) if ctx.cuda else CPU_SIZES
    peers = ctx.pick_peers(["cublas", "eager"])  # eager: the CPU's matmul
    return [make_case(NAME, "gemm", torch.float32, matmul_shape(*size), device=ctx.device,
                      variants=rungs(ctx), peer_names=peers)
            for size in sizes]


def finish(records: list[dict]) -> None:
    """× naive from the naive rung at the same size, and the published claim beside it."""
    naive = {tuple(r["shape"].values()): r["ours_us"] for r in records
             if r["variant"] == "naive" and r["status"] == "ok"}
    for r in records:
        base = naive.get(tuple(r["shape"].values()))
        r["extra"]["speedup_vs_naive"] = base / r["ours_us"] if base and r["ours_us"] else None
        r["extra"]["published_speedup_vs_naive"] = PUBLISHED_SPEEDUP.get(r["variant"])


def sections(ctx) -> dict:
    """Each rung's kernels as ``torch_memopt.kernel_info`` reports them (CUDA only)."""
    if not ctx.cuda:
        return {}
    return {"kernels": {rung: torch_memopt.kernel_info("gemm", rung)
                        for rung in rungs(ctx) if rung != "auto"}}
