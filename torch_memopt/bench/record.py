"""The one record schema every suite writes, and the figures made from records.

One record per (case, variant of ours)::

    suite, op, dtype, shape {dims}, label, variant, options
    ours_us            our median (None when not timed: see status)
    peers {name: us}   each peer's median at the same case (None: not timed, see notes)
    best_peer, ratio   the fastest peer and its time / ours: > 1 means we are faster
    tflops, gbps       ours, from the case's FLOP and byte formulas (calls.work)
    pct_copy           gbps against the run's device-to-device copy (meta.copy_gbps)
    flop, bytes        the formulas' figures for one call
    rel_err            ours against the float64 reference (relative Frobenius)
    status             "ok" | "wrong" (over tolerance: never timed) | "error" | "skipped"
    reason, notes      why not ok; {peer: why it has no time}
    check              the Timer cross-check: {ours_us, peers, ratio} or None
    extra              suite-specific figures (a published claim, speed-up over naive, ...)
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field


@dataclass
class Record:
    suite: str
    op: str
    dtype: str
    shape: dict
    variant: str
    label: str = ""
    options: dict = field(default_factory=dict)
    ours_us: float | None = None
    peers: dict = field(default_factory=dict)
    best_peer: str | None = None
    ratio: float | None = None
    tflops: float | None = None
    gbps: float | None = None
    pct_copy: float | None = None
    flop: float | None = None
    bytes: float | None = None
    rel_err: float | None = None
    status: str = "ok"
    reason: str | None = None
    notes: dict = field(default_factory=dict)
    check: dict | None = None
    extra: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


def best_of(times: dict) -> tuple[str | None, float | None]:
    """The fastest timed entry of ``{name: us}``."""
    timed = [(us, name) for name, us in times.items() if us]
    if not timed:
        return None, None
    us, name = min(timed)
    return name, us


def finish(record: Record, copy_gbps: float | None) -> Record:
    """Fill best peer, ratio and rates from the record's times and work."""
    record.best_peer, best_us = best_of(record.peers)
    if record.ours_us:
        seconds = record.ours_us * 1e-6
        if best_us:
            record.ratio = best_us / record.ours_us
        if record.flop:
            record.tflops = record.flop / seconds / 1e12
        if record.bytes:
            record.gbps = record.bytes / seconds / 1e9
            if copy_gbps:
                record.pct_copy = 100.0 * record.gbps / copy_gbps
    if record.check:
        _, check_best = best_of(record.check["peers"])
        ours = record.check.get("ours_us")
        record.check["ratio"] = check_best / ours if check_best and ours else None
    return record


def geomean(values: list[float]) -> float:
    """The mean that is fair to ratios: 0.5× and 2× average to 1×, not 1.25×."""
    return math.exp(sum(math.log(v) for v in values) / len(values))


@dataclass(frozen=True)
class OpSummary:
    op: str
    count: int
    geomean: float
    worst: dict  # the record with the lowest ratio


def summarize(records: list[dict], variant: str | None = "auto") -> list[OpSummary]:
    """Per op, in first-seen order: the geometric mean and the worst of ``ratio`` over the
    timed records of ``variant`` (every variant when None). A wrong or untimed record
    has no ratio and is left out, never counted as a speed-up."""
    by_op: dict[str, list[dict]] = {}
    for r in records:
        if r.get("ratio") and r["status"] == "ok" and (variant is None or r["variant"] == variant):
            by_op.setdefault(r["op"], []).append(r)
    return [OpSummary(op, len(rs), geomean([r["ratio"] for r in rs]), min(rs, key=lambda r: r["ratio"]))
            for op, rs in by_op.items()]
