"""The linear layers of Llama-3-8B and Llama-2-7B / Mistral-7B at 1-8192 tokens,
bfloat16 and float16: ``auto`` against cuBLAS (``F.linear``) on the same inputs.

The layers (N ← K, weight [N, K], no bias): Llama-3-8B qkv 6144 ← 4096, o 4096 ← 4096,
gate+up 28672 ← 4096, down 4096 ← 14336; Llama-2-7B qkv 12288 ← 4096, o 4096 ← 4096,
gate+up 22016 ← 4096, down 4096 ← 11008. M (tokens) in {1, 16, 64, 128, 256, 512, 1024,
2048, 4096, 8192}. Each record keeps the plan ``auto`` ran (``torch_memopt.gemm_plan``:
rung, its tile or K splits) and % copy: the weights' bytes over the time against the run's
device-to-device copy, the bound at small M. CUDA only: the CPU reference GEMM would
take minutes a case.
"""
from __future__ import annotations

import torch

import torch_memopt

from ..calls import matmul_shape
from ..case import make_case
from ..report import Column

NAME = "transformer-gemm"
TITLE = "the linear layers of Llama-3-8B and Llama-2-7B at 1-8192 tokens beside cuBLAS"
ABOUT = (
    "The bfloat16 / float16 linear layers of Llama-3-8B (qkv 6144←4096, o 4096←4096, "
    "gate+up 28672←4096, down 4096←14336) and Llama-2-7B / Mistral-7B (qkv 12288←4096, "
    "o 4096←4096, gate+up 22016←4096, down 4096←11008) at 1-8192 tokens: `auto` "
    "against cuBLAS (`F.linear`) on the same inputs; `plan` is the rung and its tile or K splits "
    "`auto` took (`torch_memopt.gemm_plan`).")

# (model, layer, N, K)
LAYERS = (
    ("llama-3-8b", "qkv", 6144, 4096),
    ("llama-3-8b", "o", 4096, 4096),
    ("llama-3-8b", "gate_up", 28672, 4096),
    ("llama-3-8b", "down", 4096, 14336),
    ("llama-2-7b", "qkv", 12288, 4096),
    ("llama-2-7b", "o", 4096, 4096),
    ("llama-2-7b", "gate_up", 22016, 4096),
    ("llama-2-7b", "down", 4096, 11008),
)
TOKENS = (1, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192)
QUICK_TOKENS = (128, 2048)
DTYPES = [torch.bfloat16, torch.float16]

COLUMNS = [Column("plan", lambda r: r["extra"].get("plan", "—"), False)]


def _plan_label(M: int, N: int, K: int, dtype: torch.dtype) -> str:
    """The rung and splits auto takes here; on a machine without a GPU (case lists
    built for a look, never timed) those an H200 would take, packed ideally."""
    described = {} if torch.cuda.is_available() else {"capability": (9, 0), "sm_count": 132}
    plan = torch_memopt.gemm_plan(M, N, K, dtype, **described)
    if plan["variant"] == "wgmma":
        return f"wgmma {plan['tile'][0]}x{plan['tile'][1]}"
    return plan["variant"] + (f" ×{plan['splits']}" if plan["splits"] > 1 else "")


def cases(ctx) -> list:
    if not ctx.cuda or not ctx.wants_op("linear"):
        return []
    tokens = QUICK_TOKENS if ctx.quick else TOKENS
    dtypes = ctx.pick_dtypes([torch.bfloat16] if ctx.quick else DTYPES)
    peers = ctx.pick_peers(["cublas"])
    out = []
    for dtype in dtypes:
        for M in tokens:
            for model, layer, N, K in LAYERS:
                out.append(make_case(
                    NAME, "linear", dtype, matmul_shape(M, N, K), device=ctx.device,
                    variants=ctx.pick_variants("linear"), peer_names=peers,
                    options={"bias": False}, label=f"{model} {layer}",
                    extra={"tokens": M, "model": model, "layer": layer,
                           "plan": _plan_label(M, N, K, dtype)}))
    return out

RATIO_CHART = ("tokens", "label")  # ours ÷ cuBLAS against M, a line per layer


def digest(records: list[dict], meta: dict | None = None) -> str:
    """The table the issue states its targets in: auto ÷ cuBLAS by M, geomean and worst
    over the layers, a row per dtype. (``meta``, the run's, is not needed here.)"""
    from ..record import geomean

    by: dict[tuple[str, int], list[float]] = {}
    for r in records:
        if r["variant"] == "auto" and r["status"] == "ok" and r.get("ratio"):
            by.setdefault((r["dtype"], r["extra"]["tokens"]), []).append(r["ratio"])
    if not by:
        return ""
    tokens = sorted({m for _, m in by})
    lines = ["| dtype | | " + " | ".join(f"M = {m}" for m in tokens) + " |",
             "|---|---|" + "---:|" * len(tokens)]
    for dtype in sorted({d for d, _ in by}):
        cells = [by.get((dtype, m)) for m in tokens]
        lines.append(f"| {dtype} | geomean × cuBLAS | " +
                     " | ".join(f"{geomean(c):.2f}" if c else "—" for c in cells) + " |")
        lines.append(f"| {dtype} | worst × cuBLAS | " +
                     " | ".join(f"{min(c):.2f}" if c else "—" for c in cells) + " |")
    return "\n".join(lines)
