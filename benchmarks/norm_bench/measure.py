"""One case of the norm / softmax run: check every call once, time it, make the records.

Order per (case, dtype): one input set, shared by every call; its float64 reference;
then the peers (eager, torch.compile, Liger) and ours (``auto``, then each variant).
Each call runs once and is checked against the reference (for torch.compile this
first call compiles, so the timing never sees a compile), then timed alone once (it
picks the timer) and timed for real (flushed do_bench median). A call that raises is
recorded as an error and the run goes on; a wrong result is not timed: it gets no
speed figures, and ours get the verdict WRONG.
"""
from __future__ import annotations

import math
from typing import Callable

import torch

from tc_gemm.measure import _first_line as first_line
from tc_gemm.measure import progress_line, relative_frobenius_error

from .calls import reference
from .cases import COMPILE, EAGER, Case

# Relative Frobenius error against float64: bf16 output rounding alone is ~2e-3; fp32
# statistics keep float32 outputs near 1e-7.
TOLERANCE = {"float32": 1e-5, "bfloat16": 1e-2}


def empty_record(case: Case, dtype: str, name: str, kind: str) -> dict:
    return {
        "op": case.op,
        "dtype": dtype,
        "group": case.group,
        "shape": case.shape(),
        "variant": name,
        "kind": kind,
        "status": "ok",
        "reason": None,
        "bytes": case.moved_bytes(dtype),
        "method": None,
        "probe_ms": None,
        "ms": None,
        "us": None,
        "gbps": None,
        "pct_copy": None,
        "eager_ms": None,
        "compile_ms": None,
        "peer": None,
        "peer_ms": None,
        "ratio": None,
        "rel_err": None,
        "correct": None,
        "target": case.target(dtype).as_dict() if kind == "ours" else None,
        "verdict": None,
    }


def check(record: dict, out: torch.Tensor, ref: torch.Tensor) -> None:
    """Fill rel_err and correct (and the reason when wrong) for one output."""
    tolerance = TOLERANCE[record["dtype"]]
    if tuple(out.shape) != tuple(ref.shape) or not bool(torch.isfinite(out).all()):
        record.update(correct=False, reason="output of a wrong shape or with non-finite values")
        return
    error = relative_frobenius_error(out, ref)
    record["correct"] = error <= tolerance
    if math.isfinite(error):
        record["rel_err"] = error
    if not record["correct"]:
        record["reason"] = f"wrong result: relative error {error:.2e} above {tolerance:g}"


def _usable_ms(record: dict | None) -> float | None:
    """A timed, correct call's median, else None."""
    if record is None or record["status"] != "ok" or record["correct"] is False:
        return None
    return record["ms"]


def finish_case(case: Case, dtype: str, records: list[dict], copy_gbps: float | None) -> None:
    """Rates, the peer each of ours is judged against (same case, same run), verdicts.

    Bandwidth rows: the faster of eager and torch.compile (Liger is reported, not a
    bar); decode rows: eager."""
    by_name = {r["variant"]: r for r in records if r["kind"] == "peer"}
    eager_ms, compile_ms = _usable_ms(by_name.get(EAGER)), _usable_ms(by_name.get(COMPILE))
    candidates = [(EAGER, eager_ms)] if case.decode else [(EAGER, eager_ms), (COMPILE, compile_ms)]
    timed = [(ms, name) for name, ms in candidates if ms]
    peer_ms, peer = min(timed) if timed else (None, None)
    target = case.target(dtype)
    for record in records:
        record["eager_ms"], record["compile_ms"] = eager_ms, compile_ms
        if record["kind"] == "ours" and record["correct"] is False:
            record["verdict"] = "WRONG"
        ms = _usable_ms(record)
        if not ms:
            continue
        record["us"] = ms * 1e3
        record["gbps"] = record["bytes"] / (ms * 1e-3) / 1e9
        if copy_gbps:
            record["pct_copy"] = 100.0 * record["gbps"] / copy_gbps
        if record["kind"] == "peer":
            continue
        record["peer"], record["peer_ms"] = peer, peer_ms
        if peer_ms:
            record["ratio"] = peer_ms / ms
        record["verdict"] = target.judge(record["ratio"], record["pct_copy"])


def progress(case: Case, record: dict) -> str:
    def figures() -> list[str]:
        parts = []
        if record["ms"] is not None:
            parts.append(f"{record['us']:9.2f} µs" if case.decode else f"{record['ms']:9.4f} ms")
        if record["gbps"] is not None and not case.decode:
            parts.append(f"{record['gbps']:6.0f} GB/s")
        if record["pct_copy"] is not None and not case.decode:
            parts.append(f"{record['pct_copy']:5.1f}% copy")
        if record["ratio"] is not None:
            parts.append(f"{record['ratio']:.2f}× {record['peer']}")
        return parts

    return progress_line(f"  {record['dtype']:<8} {str(case):<26} {record['variant']:<8}",
                         record, figures)


def measure_case(
    case: Case,
    dtype: str,
    calls: list[tuple[str, str, str | None]],
    backend,
    *,
    copy_gbps: float | None,
    log: Callable[[str], None],
) -> list[dict]:
    """Records for each of ``calls`` (``cases.plan_calls``) at ``case`` in ``dtype``."""
    inputs = backend.inputs(case, dtype)
    ref = reference(case.op, inputs)
    records = []
    for name, kind, skip in calls:
        record = empty_record(case, dtype, name, kind)
        records.append(record)
        if skip is not None:
            record.update(status="skipped", reason=skip)
            continue
        try:
            fn = backend.function(case, name)
            out = fn(*inputs)
            check(record, out, ref)
            del out
            if not record["correct"]:
                continue

            def call(fn=fn, inputs=inputs):
                return fn(*inputs)

            record["probe_ms"] = backend.probe_ms(call)
            record["ms"], record["method"] = backend.time(call, record["probe_ms"])
        except Exception as exc:  # a call that refuses a shape must not end the run
            record.update(status="error", reason=first_line(exc))
    del inputs, ref
    finish_case(case, dtype, records, copy_gbps)
    for record in records:
        log(progress(case, record))
    return records
