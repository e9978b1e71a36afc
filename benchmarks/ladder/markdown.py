"""The README's GEMM-ladder section, made from the results JSON by
``benchmarks/readme_tables.py``: the ladder table beside the published claims, the
chart, the resource table and the ncu table."""
from __future__ import annotations

from . import tables
from .rungs import Size


def pipe_table(table: tables.Table) -> str:
    headers, rows = table
    align = ["---"] + ["---:"] * (len(headers) - 1)
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(str(cell).replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def section(document: dict, chart: str | None = None) -> str:
    """The whole ladder section; ``chart`` is the PNG's path relative to the README."""
    meta = document["meta"]
    parts = []
    if document.get("results"):
        parts.append(
            f"{meta['gpu']} (sm {meta['capability']}), torch {meta['torch']}, CUDA {meta['cuda']}, "
            f"driver {meta.get('driver') or 'unknown'}, {meta['date'][:10]}; fp32 inputs from "
            f"torch.randn; {meta['timing']}; cuBLAS: {meta['cublas']}. TFLOP/s = 2·M·N·K / time; "
            f"✗ marks a relative Frobenius error against cuBLAS above {meta['tolerance']:g}."
        )
        parts.append(pipe_table(tables.ladder_table(document)))
    if chart:
        parts.append(f"![FP32 GEMM ladder: TFLOP/s per rung]({chart})")
    resources = tables.resources_table(document)
    if resources is not None:
        arch = document["resources"]["arch"]
        parts.append(
            f"Resources per kernel, from `cuobjdump --dump-resource-usage` ({arch}); "
            "registers per thread, shared memory per block, local memory (spills and local "
            "arrays) and stack per thread. A rung has one kernel instantiation per set of "
            "template arguments (as declared in `csrc/gemm/kernels/`: padding, B layout, "
            "vector loads); the last column marks the one ncu saw the ladder run launch."
        )
        parts.append(pipe_table(resources))
    profiled = tables.ncu_table(document)
    if profiled is not None:
        ncu = document["ncu"]
        parts.append(
            f"Nsight Compute ({ncu.get('tool') or 'ncu'}, `--clock-control none`), one call per "
            f"variant at {tables.size_label(Size(**ncu['size']))}: sectors per request of global "
            "loads (4 = a fully coalesced warp of fp32 loads, 32 = a sector per thread), "
            "cp.async loads counted apart; shared-memory bank conflicts; achieved occupancy; "
            "DRAM throughput as % of peak and DRAM bytes over the compulsory 4·(MK + KN + MN)."
        )
        parts.append(pipe_table(profiled))
    return "\n\n".join(parts)
