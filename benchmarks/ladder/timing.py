"""How one call is timed on CUDA: which timer, how many repetitions, the L2 flush.

Primary figure: the median of per-call CUDA-event times with L2 flushed before every
call. For calls under ``SLOW_CALL_MS`` that is ``triton.testing.do_bench(fn,
return_mode="median")``, which zeroes a 256 MB buffer before each timed call (more
than 4x the H200's 60 MB L2) and times the call alone between two events. Its rep
budget is raised to at least ``DO_BENCH_MIN_REPS`` calls, because do_bench's own
100 ms would give a 40 ms call two samples.

Slow rungs (naive at 8192³ runs ~2.2 s a call) cannot afford do_bench's fixed cost
(one call, five estimate calls, one warm-up, one rep: eight calls, 18 s). They get
``time_event_reps``: the same flush-then-event protocol for ``plan.reps`` calls, from
``MIN_REPS`` up to what fits ``SLOW_BUDGET_MS``. Without triton every call goes that way.

Cross-check: ``torch.utils.benchmark.Timer.blocked_autorange`` through the project's
bench harness (``torch_memopt.bench.harness.time_call``), which rotates input sets
totalling 2x L2 instead of flushing and times back-to-back blocks, launch overhead
included. It runs for calls under ``SLOW_CALL_MS`` only.
"""
from __future__ import annotations

import statistics
from typing import Callable, NamedTuple, Sequence

import torch

SLOW_CALL_MS = 100.0
SLOW_BUDGET_MS = 1000.0
MIN_REPS = 3
MAX_SLOW_REPS = 10
DO_BENCH_MIN_REPS = 10
DO_BENCH_WARMUP_MS = 25.0
FLUSH_BYTES = 256 * 1024 * 1024  # triton's own flush size, so both timers flush alike


class Plan(NamedTuple):
    """``method`` is "do_bench" (``rep_ms`` of repetitions) or "event_reps" (``reps`` calls)."""

    method: str
    reps: int | None
    rep_ms: float | None


def plan_for(estimate_ms: float, *, rep_ms: float, have_do_bench: bool) -> Plan:
    """The timer and repetition count for a call that took ``estimate_ms`` once, warm."""
    estimate_ms = max(estimate_ms, 1e-6)
    if estimate_ms >= SLOW_CALL_MS:
        reps = int(SLOW_BUDGET_MS // estimate_ms)
        return Plan("event_reps", max(MIN_REPS, min(MAX_SLOW_REPS, reps)), None)
    if not have_do_bench:
        return Plan("event_reps", max(DO_BENCH_MIN_REPS, min(1000, int(rep_ms // estimate_ms))), None)
    return Plan("do_bench", None, max(rep_ms, DO_BENCH_MIN_REPS * estimate_ms))


def cross_check_wanted(estimate_ms: float) -> bool:
    return estimate_ms < SLOW_CALL_MS


def have_do_bench() -> bool:
    try:
        from triton.testing import do_bench  # noqa: F401
    except Exception:
        return False
    return True


def event_ms(fn: Callable[[], object]) -> float:
    """One call between two CUDA events, in ms (after whatever warm-up the caller did)."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end)


def time_event_reps(fn: Callable[[], object], reps: int) -> float:
    """Median of ``reps`` calls, each after zeroing a ``FLUSH_BYTES`` buffer."""
    flush = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for start, end in zip(starts, ends):
        flush.zero_()
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


def time_planned(fn: Callable[[], object], plan: Plan) -> float:
    """The primary figure, in ms, by ``plan``."""
    if plan.method == "do_bench":
        from triton.testing import do_bench

        return float(do_bench(fn, warmup=DO_BENCH_WARMUP_MS, rep=plan.rep_ms, return_mode="median"))
    return time_event_reps(fn, plan.reps)


def time_blocked_autorange(
    fn: Callable, input_sets: Sequence[tuple], *, label: str, min_run_time: float
) -> float:
    """The Timer cross-check, in ms: median block time per call over rotated input sets."""
    from torch_memopt.bench.harness import time_call

    measurement = time_call(
        fn, input_sets, label="gemm ladder", sub_label=label, description="fp32",
        min_run_time=min_run_time,
    )
    return measurement.median * 1e3
