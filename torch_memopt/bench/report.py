"""What the bench prints and writes: the opening line, the tables and the JSON file.

The JSON is the record a README table is generated from (house style: never typed by
hand), so it carries what a reader needs to trust and reproduce a figure (GPU, compute
capability, torch and CUDA versions, date, the timing settings) and nothing that
identifies the machine: no hostname, no user, no paths.
"""
from __future__ import annotations

import json
import sys
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

import torch
from torch.utils.benchmark import Compare, Measurement

import torch_memopt

from . import harness, shapes
from .runner import AGREEMENT_TOLERANCE, Result

PROG = "torch_memopt.bench"


def environment(device: torch.device, *, quick: bool, min_run_time: float) -> dict:
    """The ``meta`` block of the JSON; also the source of the opening line."""
    on_gpu = device.type == "cuda"
    properties = torch.cuda.get_device_properties(device) if on_gpu else None
    return {
        "gpu": properties.name if on_gpu else None,
        "device": device.type,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "capability": f"{properties.major}.{properties.minor}" if on_gpu else None,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "quick": quick,
        "l2_bytes": harness.l2_cache_bytes(device) if on_gpu else None,
        "torch_memopt": getattr(torch_memopt, "__version__", None),
        "timer_threads": harness.TIMER_THREADS,
        "min_run_time_s": min_run_time,
        "timing": "median of torch.utils.benchmark.Timer.blocked_autorange",
        "l2_flush": (
            f"each call reads the next of n input sets in rotation, n = "
            f"ceil({harness.L2_MULTIPLE} x L2 / set bytes) clamped to [2, {harness.MAX_INPUT_SETS}]"
            if on_gpu
            else "none (CPU)"
        ),
    }


def opening_line(meta: dict) -> str:
    """The first line printed: which hardware is timed, with versions."""
    if meta["device"] == "cuda":
        l2_mib = meta["l2_bytes"] / 2**20
        return (
            f"{PROG}: {meta['gpu']} (compute capability {meta['capability']}, "
            f"{l2_mib:.0f} MiB L2), torch {meta['torch']}, CUDA {meta['cuda']}"
        )
    why = "no CUDA GPU found" if not torch.cuda.is_available() else "--device cpu given"
    return (
        f"{PROG}: {why}, timing the CPU reference kernels "
        f"(torch {meta['torch']}, {meta['timer_threads']} thread)"
    )


def method_line(meta: dict) -> str:
    return (
        f"{PROG}: {meta['timing']} (min_run_time {meta['min_run_time_s']:g} s); "
        f"L2 flush: {meta['l2_flush']}; speedup_vs_stock = stock time / ours (> 1: ours faster)"
    )


def compare_table(measurements: Sequence[Measurement]) -> str:
    compare = Compare(list(measurements))
    compare.trim_significant_figures()
    return str(compare)


def _number(value: float) -> str:
    return f"{value:.0f}" if abs(value) >= 1000 else f"{value:.4g}"


SUMMARY_COLUMNS = (
    "op", "dtype", "shape", "variant", "ours ms", "stock ms",
    "ours rate", "stock rate", "unit", "speedup_vs_stock", "agrees",
)


def summary_table(results: Sequence[Result]) -> str:
    """One row per (case, variant), aligned; shape legend on the last line."""
    rows = [
        (
            r.op, r.dtype, shapes.shape_text(r.shape), r.variant,
            _number(r.ours_ms), _number(r.stock_ms), _number(r.ours_rate), _number(r.stock_rate),
            r.rate_unit, f"{r.speedup_vs_stock:.3g}", "yes" if r.agrees_with_stock else "NO",
        )
        for r in results
    ]
    widths = [max(len(row[i]) for row in [SUMMARY_COLUMNS, *rows]) for i in range(len(SUMMARY_COLUMNS))]
    text_columns = 4  # op, dtype, shape, variant: left-aligned; the rest are numbers

    def line(cells) -> str:
        return "  ".join(
            cell.ljust(width) if i < text_columns else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(cells, widths))
        ).rstrip()

    body = [line(SUMMARY_COLUMNS), line("-" * width for width in widths), *map(line, rows)]
    body.append("shapes: gemm and linear M x N x K; layer_norm, rms_norm and softmax rows x N")
    return "\n".join(body)


def warn_disagreements(results: Sequence[Result], stream=None) -> None:
    """Name, on stderr, every result whose output strayed from stock's."""
    stream = stream if stream is not None else sys.stderr
    for r in results:
        if not r.agrees_with_stock:
            error = "not finite" if r.max_rel_err_vs_stock is None else f"{r.max_rel_err_vs_stock:.3g}"
            tolerance = AGREEMENT_TOLERANCE[getattr(torch, r.dtype)]
            print(
                f"{PROG}: warning: {r.op} {r.dtype} {shapes.shape_text(r.shape)} variant "
                f"{r.variant!r} disagrees with stock: max relative error {error}, "
                f"expected <= {tolerance:g}",
                file=stream,
            )


def write_json(path: str | Path, meta: dict, results: Sequence[Result]) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"meta": meta, "results": [asdict(r) for r in results]}
    path.write_text(json.dumps(document, indent=2) + "\n")
