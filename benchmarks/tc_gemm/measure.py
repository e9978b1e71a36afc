"""One case of the acceptance run: check every call once, time it, make the records.

Order per (case, dtype): one input set; the reference; then cuBLAS and each rung of
the plan: one call checked against the reference (it doubles as the warm-up), one
call timed alone (it picks the timer), the primary timing (flushed do_bench median),
and the Timer cross-check over input sets rotated through 2x L2. A call that raises
is recorded as an error and the run goes on; a wrong result is timed but its speed
figures are left empty and its verdict is WRONG: it is never reported as a speed-up.

Reference: every row against float64 at M <= ``FULL_REFERENCE_MAX_M`` (the skinny
shapes, cheap); above it ``SAMPLED_ROWS`` rows spread over M (the last included, so
a tail block is seen) against fp32-accumulated ``torch.mm`` with TF32 off, and every
output checked finite.
"""
from __future__ import annotations

import math
from typing import Callable

import torch

from torch_memopt.bench.cases import fp32_matmul_without_tf32

from .cases import CUBLAS, Case

# Relative Frobenius error: half output rounding is ~2e-3 (bf16) and ~3e-4 (fp16).
TOLERANCE = {"bfloat16": 1e-2, "float16": 5e-3}
FULL_REFERENCE_MAX_M = 256
SAMPLED_ROWS = 256
# Above this a call skips do_bench's fixed cost and the Timer (a slow fallback, not a rung).
SLOW_CALL_MS = 100.0


def empty_record(case: Case, dtype: str, variant: str) -> dict:
    return {
        "dtype": dtype,
        "layout": case.layout,
        "bias": case.bias,
        "group": case.group,
        "shape": case.shape(),
        "variant": variant,
        "status": "ok",
        "reason": None,
        "method": None,
        "probe_ms": None,
        "ms_do_bench": None,
        "ms_timer": None,
        "timer_sets": None,
        "tflops": None,
        "cublas_ms": None,
        "cublas_ms_timer": None,
        "ratio": None,
        "ratio_timer": None,
        "weight_gbps": None,
        "pct_copy": None,
        "ms_clean_l2": None,
        "weight_gbps_clean_l2": None,
        "pct_copy_clean_l2": None,
        "rel_err": None,
        "reference": None,
        "correct": None,
        "target": None if variant == CUBLAS else case.target.as_dict(),
        "verdict": None,
    }


def sample_rows(m: int, device) -> torch.Tensor | None:
    """None (every row) at M <= FULL_REFERENCE_MAX_M, else SAMPLED_ROWS indices from 0 to M - 1."""
    if m <= FULL_REFERENCE_MAX_M:
        return None
    return torch.linspace(0, m - 1, SAMPLED_ROWS, device=device).round().long().unique()


def reference(case: Case, inputs: tuple) -> tuple[torch.Tensor | None, torch.Tensor, str]:
    """(rows or None, the reference of those rows, how it was made) for one input set."""
    a, b = inputs[0], inputs[1]
    bias = inputs[2] if len(inputs) > 2 else None
    rows = sample_rows(a.shape[0], a.device)
    if rows is None:
        dtype, kind = torch.float64, "float64"
    else:
        dtype, kind = torch.float32, f"fp32 torch.mm (tf32 off), {rows.numel()} rows"
        a = a[rows]
    rhs = b.to(dtype).t() if case.layout == "linear" else b.to(dtype)
    with fp32_matmul_without_tf32():
        ref = torch.mm(a.to(dtype), rhs)
    if bias is not None:
        ref += bias.to(dtype)
    return rows, ref, kind


def relative_frobenius_error(out: torch.Tensor, ref: torch.Tensor) -> float:
    """||out - ref||_F / ||ref||_F in float64; inf for a wrong shape or a non-finite result."""
    if out.shape != ref.shape:
        return math.inf
    norm = torch.linalg.vector_norm
    ref = ref.double()
    value = float(norm(out.double() - ref) / norm(ref).clamp_min(1e-300))
    return value if math.isfinite(value) else math.inf


def check(record: dict, out: torch.Tensor, rows, ref: torch.Tensor, kind: str, m: int, n: int) -> None:
    """Fill rel_err, reference and correct for one output against the reference."""
    record["reference"] = kind
    tolerance = TOLERANCE[record["dtype"]]
    if tuple(out.shape) != (m, n) or not bool(torch.isfinite(out).all()):
        record.update(correct=False, reason="output of a wrong shape or with non-finite values")
        return
    error = relative_frobenius_error(out if rows is None else out[rows], ref)
    record["correct"] = error <= tolerance
    if math.isfinite(error):
        record["rel_err"] = error
    if not record["correct"]:
        record["reason"] = f"wrong result: relative error {error:.2e} above {tolerance:g}"


def finish_case(case: Case, records: list[dict], copy_gbps: float | None) -> None:
    """Rates, ratios to cuBLAS (same case, same run), weight bandwidth and verdicts."""
    cublas = next((r for r in records if r["variant"] == CUBLAS), None)
    usable = cublas is not None and cublas["status"] == "ok" and cublas["correct"] is not False
    base_ms = cublas["ms_do_bench"] if usable else None
    base_timer = cublas["ms_timer"] if usable else None
    target = case.target
    for record in records:
        record["cublas_ms"], record["cublas_ms_timer"] = base_ms, base_timer
        ms = record["ms_do_bench"]
        if record["status"] != "ok" or not ms:
            continue
        if record["correct"] is False:
            record["verdict"] = None if record["variant"] == CUBLAS else "WRONG"
            continue
        record["tflops"] = case.flop / (ms * 1e-3) / 1e12
        if case.skinny:
            record["weight_gbps"] = case.weight_bytes / (ms * 1e-3) / 1e9
            if copy_gbps:
                record["pct_copy"] = 100.0 * record["weight_gbps"] / copy_gbps
            if record["ms_clean_l2"]:
                clean = case.weight_bytes / (record["ms_clean_l2"] * 1e-3) / 1e9
                record["weight_gbps_clean_l2"] = clean
                record["pct_copy_clean_l2"] = 100.0 * clean / copy_gbps if copy_gbps else None
        if record["variant"] == CUBLAS:
            continue
        if base_ms:
            record["ratio"] = base_ms / ms
        if base_timer and record["ms_timer"]:
            record["ratio_timer"] = base_timer / record["ms_timer"]
        record["verdict"] = target.judge(record["ratio"], record["pct_copy"])


def _first_line(exc: Exception) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"


def progress_line(head: str, record: dict, figures: Callable[[], list[str]]) -> str:
    """One line of a run's progress: ``head``, then the call's own ``figures()`` and
    the parts every benchmark shares (error against the reference, verdict, reason);
    a call that did not run shows its status and reason instead. Shared by
    tc_gemm and norm_bench."""
    if record["status"] != "ok":
        return f"{head} {record['status']}: {record['reason']}"
    parts = figures()
    if record["rel_err"] is not None:
        parts.append(f"err {record['rel_err']:.1e}")
    if record["verdict"]:
        parts.append(record["verdict"])
    if record["reason"]:
        parts.append(f"({record['reason']})")
    return f"{head} " + "  ".join(parts)


def progress(case: Case, record: dict) -> str:
    def figures() -> list[str]:
        ms = record["ms_do_bench"]
        parts = [f"{ms:9.4f} ms" if ms is not None else "        — ms"]
        if record["tflops"] is not None:
            parts.append(f"{record['tflops']:6.1f} TFLOP/s")
        if record["weight_gbps"] is not None:
            parts.append(f"{record['weight_gbps']:6.0f} GB/s weights")
        if record["ratio"] is not None:
            parts.append(f"{record['ratio']:.2f}× cuBLAS")
        if record["ms_timer"] is not None:
            parts.append(f"Timer {record['ms_timer']:.4f} ms")
        return parts

    return progress_line(f"  {record['dtype']:<8} {str(case):<28} {record['variant']:<6}",
                         record, figures)


def measure_case(
    case: Case,
    dtype: str,
    plan: list[tuple[str, str | None]],
    backend,
    *,
    copy_gbps: float | None,
    cross_check: bool,
    log: Callable[[str], None],
) -> list[dict]:
    """Records for cuBLAS and each variant of ``plan`` at ``case`` in ``dtype``, cuBLAS first."""
    input_sets = backend.inputs(case, dtype, 1)
    rows, ref, kind = reference(case, input_sets[0])
    records = []
    for variant, skip in [(CUBLAS, None), *plan]:
        record = empty_record(case, dtype, variant)
        records.append(record)
        if skip is not None:
            record.update(status="skipped", reason=skip)
            continue
        try:
            fn = backend.function(case, variant)
            first = input_sets[0]
            out = fn(*first)
            check(record, out, rows, ref, kind, case.M, case.N)
            del out

            def call(fn=fn, first=first):
                return fn(*first)

            record["probe_ms"] = backend.probe_ms(call)
            record["ms_do_bench"], record["method"] = backend.time(call, record["probe_ms"])
            if case.skinny:
                record["ms_clean_l2"] = backend.clean_l2_ms(call)
        except Exception as exc:  # a rung that refuses a shape must not end the run
            record.update(status="error", reason=_first_line(exc))
            continue
        if not cross_check or record["probe_ms"] >= SLOW_CALL_MS:
            continue
        try:
            wanted = backend.timer_set_count(case, dtype)
            if len(input_sets) < wanted:
                input_sets += backend.inputs(case, dtype, wanted - len(input_sets))
            record["ms_timer"] = backend.timer(fn, input_sets[:wanted], f"{variant} {case} {dtype}")
            record["timer_sets"] = wanted
        except Exception as exc:
            failed = f"Timer cross-check failed: {_first_line(exc)}"
            record["reason"] = f"{record['reason']}; {failed}" if record["reason"] else failed
    del input_sets, ref
    finish_case(case, records, copy_gbps)
    for record in records:
        log(progress(case, record))
    return records
