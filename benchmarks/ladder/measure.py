"""One size of the ladder: check every rung against cuBLAS, time it, make the records.

Order per size: fresh inputs; cuBLAS once for the reference; then cuBLAS and each rung
in ladder order: one call checked against the reference (it doubles as the warm-up:
lazy module load, allocator), one call timed alone to size the plan, the planned
timing, and the Timer cross-check where the call is fast enough. A rung that raises
is recorded as an error and the run goes on; one whose relative Frobenius error
exceeds ``tolerance`` is timed anyway and flagged (``correct: false``).
"""
from __future__ import annotations

import math
from typing import Callable

import torch

from . import timing
from .rungs import CUBLAS, PUBLISHED_SPEEDUP, Size

# fp32 against fp32 cuBLAS: both accumulate in fp32 in different orders, ~1e-6 at
# K = 8192; 1e-4 catches a wrong tile or tail without flagging summation order.
REL_ERR_TOLERANCE = 1e-4


def relative_frobenius_error(out: torch.Tensor, reference: torch.Tensor) -> float:
    """||out - ref||_F / ||ref||_F in float64; inf for a wrong shape or a non-finite result."""
    if out.shape != reference.shape:
        return math.inf
    ref = reference.double()
    norm = torch.linalg.vector_norm
    error = norm(out.double() - ref) / norm(ref).clamp_min(1e-300)
    value = float(error)
    return value if math.isfinite(value) else math.inf


def tflops(size: Size, ms: float | None) -> float | None:
    return None if ms is None or ms <= 0 else size.flop / (ms * 1e-3) / 1e12


def empty_record(size: Size, variant: str) -> dict:
    return {
        "shape": size.as_dict(),
        "variant": variant,
        "status": "ok",
        "reason": None,
        "rel_err_vs_cublas": None,
        "correct": None,
        "probe_ms": None,
        "ms": None,
        "method": None,
        "reps": None,
        "timer_ms": None,
        "tflops": None,
        "speedup_vs_naive": None,
        "pct_cublas": None,
        "published_speedup_vs_naive": PUBLISHED_SPEEDUP.get(variant),
    }


def skip_reason(size: Size, variant: str, max_naive_size: int | None) -> str | None:
    if variant == "naive" and max_naive_size is not None and max(size) > max_naive_size:
        return f"skipped: naive above --max-naive-size {max_naive_size}"
    return None


def add_ratios(records: list[dict]) -> None:
    """Fill speed-up over naive and % of cuBLAS from the records of one size."""
    by_variant = {r["variant"]: r for r in records if r["status"] == "ok" and r["ms"]}
    naive = by_variant.get("naive")
    cublas = by_variant.get(CUBLAS)
    for record in records:
        if record["status"] != "ok" or not record["ms"]:
            continue
        if naive is not None:
            record["speedup_vs_naive"] = naive["ms"] / record["ms"]
        if cublas is not None:
            record["pct_cublas"] = 100.0 * cublas["ms"] / record["ms"]


def _progress(size: Size, record: dict) -> str:
    head = f"  {str(size):>16} {record['variant']:<17}"
    if record["status"] != "ok":
        return f"{head} {record['status']}: {record['reason']}"
    err = record["rel_err_vs_cublas"]
    why = record["reason"] or "rel err above tolerance"
    flag = "" if record["correct"] is not False else f"  WRONG ({why})"
    cross = f"  Timer {record['timer_ms']:9.3f} ms" if record["timer_ms"] is not None else ""
    return (
        f"{head} {record['ms']:9.3f} ms {record['tflops']:7.2f} TFLOP/s  "
        f"[{record['method']}{'' if record['reps'] is None else ' x' + str(record['reps'])}]{cross}"
        f"{'' if err is None else f'  err {err:.1e}'}{flag}"
    )


def _first_line(exc: Exception) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"


def _check_and_time(record, size, fn, input_sets, reference, backend, tolerance) -> None:
    """One checked call (also the warm-up), one call timed alone for the plan, then the plan."""
    a, b = input_sets[0]
    out = fn(a, b)
    if record["variant"] != CUBLAS:
        error = relative_frobenius_error(out, reference)
        record["correct"] = error <= tolerance
        if math.isfinite(error):
            record["rel_err_vs_cublas"] = error
        else:  # JSON has no inf
            record["reason"] = "output of a wrong shape or with non-finite values"
    del out

    def call():
        return fn(a, b)

    record["probe_ms"] = backend.probe_ms(call)
    ms, plan = backend.time(call, record["probe_ms"])
    record.update(ms=ms, method=plan.method, reps=plan.reps, tflops=tflops(size, ms))


def measure_size(
    size: Size,
    variants: list[str],
    backend,
    *,
    max_naive_size: int | None,
    cross_check: bool,
    log: Callable[[str], None],
    tolerance: float = REL_ERR_TOLERANCE,
) -> list[dict]:
    """Records for cuBLAS and each of ``variants`` at ``size``, cuBLAS first."""
    input_sets = backend.inputs(size, 1)
    reference = backend.function(CUBLAS)(*input_sets[0])
    records = []
    for variant in [CUBLAS, *variants]:
        record = empty_record(size, variant)
        records.append(record)
        reason = skip_reason(size, variant, max_naive_size)
        if reason is not None:
            record.update(status="skipped", reason=reason)
            log(_progress(size, record))
            continue
        fn = backend.function(variant)
        try:
            _check_and_time(record, size, fn, input_sets, reference, backend, tolerance)
        except Exception as exc:  # a rung that refuses a shape must not end the run
            record.update(status="error", reason=_first_line(exc))
        if cross_check and record["status"] == "ok" and timing.cross_check_wanted(record["probe_ms"]):
            try:
                wanted = backend.cross_set_count(size)
                if len(input_sets) < wanted:
                    input_sets += backend.inputs(size, wanted - len(input_sets))
                record["timer_ms"] = backend.cross(fn, input_sets, f"{variant} {size}")
            except Exception as exc:
                record["reason"] = f"Timer cross-check failed: {_first_line(exc)}"
        log(_progress(size, record))
    add_ratios(records)
    return records
