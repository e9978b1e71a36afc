"""One case end to end: one input set, the float64 reference, every implementation built
and checked against it, the correct ones timed, then the records.

The check runs before any timing on the first input set and doubles as the warm-up
(lazy module loads, cuBLAS handles, Triton and Inductor compiles). A call over the
case's tolerance is never timed: a fast kernel that computes the wrong thing is no
speed-up, so its record reads "wrong" with its error, and a wrong peer is left out of
the best peer with a note. A call that raises is recorded ("skipped" for a peer that
cannot run here or a rung that does not take the dtype, "error" otherwise) and the run
goes on. Peers run first, so a case without a float64 reference (a whole model) checks
ours against the first peer's output.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from . import timing
from .case import Case
from .peers import Unavailable, first_line
from .record import Record, finish


@dataclass
class Outcome:
    """What one implementation did at a case."""

    status: str = "ok"
    reason: str | None = None
    rel_err: float | None = None
    samples_us: tuple[float, ...] = ()
    us: float | None = None
    check_us: float | None = None
    fn: Callable | None = field(default=None, repr=False)


def _checked(case: Case, impl, inputs: tuple, ref) -> tuple[Outcome, object]:
    """Build ``impl``, call it once and judge its output; (outcome, output)."""
    outcome = Outcome()
    try:
        fn = impl.build()
        out = fn(*inputs)
    except (Unavailable, TypeError) as exc:  # a TypeError: a rung refusing the dtype
        outcome.status, outcome.reason = "skipped", first_line(exc)
        return outcome, None
    except Exception as exc:
        outcome.status, outcome.reason = "error", first_line(exc)
        return outcome, None
    outcome.fn = fn
    if ref is not None:
        outcome.rel_err = case.error(out, ref)
        if not outcome.rel_err <= case.tolerance:
            outcome.status = "wrong"
            outcome.reason = f"relative error {outcome.rel_err:.2e} above {case.tolerance:g}"
    return outcome, out


def _time_kernels(case: Case, outcomes: dict[str, Outcome], inputs: tuple,
                  timer: timing.KernelTimer, cross_check_s: float | None) -> None:
    timed = {name: o for name, o in outcomes.items() if o.status == "ok"}
    for outcome in timed.values():
        result = timer.time(lambda fn=outcome.fn: fn(*inputs))
        outcome.samples_us, outcome.us = result.samples_us, result.median_us
    if not cross_check_s or not timed or not case.rotates:
        return
    wanted = timing.input_set_count(timing.input_bytes(inputs), timing.l2_cache_bytes(timer.device))
    sets = [inputs] + [case.make_inputs() for _ in range(wanted - 1)]
    for outcome in timed.values():
        outcome.check_us = timing.timer_us(outcome.fn, sets, cross_check_s)


def _time_latency(case: Case, outcomes: dict[str, Outcome], device: str) -> None:
    timed = {name: o for name, o in outcomes.items() if o.status == "ok"}
    if not timed:
        return
    medians = timing.interleaved_median_ms({name: o.fn for name, o in timed.items()},
                                           case.extra.get("reps", 20), device)
    for name, ms in medians.items():
        timed[name].us = ms * 1e3
        timed[name].samples_us = (ms * 1e3,)


def run_case(case: Case, timer: timing.KernelTimer, *, copy_gbps: float | None = None,
             cross_check_s: float | None = None,
             progress: Callable[[str], None] = lambda what: None) -> tuple[list[Record], dict]:
    """Records for every variant of ours at ``case``, and every implementation's outcome
    by name (its samples feed the Compare table)."""
    outcomes: dict[str, Outcome] = {}
    with case.context():
        inputs = case.make_inputs()
        ref = case.reference(inputs) if case.reference else None
        for impl in sorted(case.impls, key=lambda i: i.kind != "peer"):
            progress(f"{case.title} {impl.name}")
            outcome, out = _checked(case, impl, inputs, ref)
            if ref is None and outcome.status == "ok":
                ref = out  # the first peer's output is the reference
            outcomes[impl.name] = outcome
            del out
        del ref
        if case.timing == "latency":
            _time_latency(case, outcomes, timer.device.type)
        else:
            _time_kernels(case, outcomes, inputs, timer, cross_check_s)
        del inputs
    return _records(case, outcomes, copy_gbps), outcomes


def _records(case: Case, outcomes: dict[str, Outcome], copy_gbps: float | None) -> list[Record]:
    kinds = {impl.name: impl.kind for impl in case.impls}
    peer_names = [name for name in outcomes if kinds[name] == "peer"]
    peers = {name: outcomes[name].us for name in peer_names}
    notes = {name: outcomes[name].reason for name in peer_names if outcomes[name].reason}
    records = []
    for name, outcome in outcomes.items():
        if kinds[name] != "ours":
            continue
        check = None
        if outcome.check_us is not None:
            check = {"ours_us": outcome.check_us,
                     "peers": {p: outcomes[p].check_us for p in peer_names}}
        record = Record(
            suite=case.suite, op=case.op, dtype=case.dtype, shape=dict(case.shape), variant=name,
            label=case.label, options=dict(case.options), ours_us=outcome.us, peers=dict(peers),
            flop=case.flop, bytes=case.bytes, rel_err=outcome.rel_err, status=outcome.status,
            reason=outcome.reason, notes=dict(notes), check=check, extra=dict(case.extra))
        records.append(finish(record, copy_gbps))
    return records
