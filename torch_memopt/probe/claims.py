"""A row of the probe's table: a claim of our source material, what this GPU measured,
and the verdict. Verdicts compare a measurement with the claimed range, widened by 25%
either way for "about" (the source gives round figures): "holds", "off by N×" (above or
below), or "does not apply on this GPU" with the reason."""
from __future__ import annotations

import dataclasses
from typing import Optional

SLACK = 1.25  # "about": a claim of ~200 holds from 160 to 250


@dataclasses.dataclass
class Row:
    probe: str
    claim: str
    measured: str
    verdict: str
    value: Optional[float] = None
    unit: Optional[str] = None


def in_range(value: float, low: float, high: float) -> str:
    """The verdict on a claim of ``low``-``high`` (a single figure: low == high)."""
    if low / SLACK <= value <= high * SLACK:
        return "holds"
    if value > high:
        return f"off by {value / high:.1f}× (higher)"
    return f"off by {low / value:.1f}× (lower)"


def at_least(value: float, floor: float) -> str:
    """The verdict on a claim that a speed-up is at least ``floor`` (≥ 1). The slack
    applies to the gain, not to the whole ratio: "about 2×" holds from 1.8×, "1.05×"
    from 1.04×, and no claim of a gain holds at a loss (with ``floor / SLACK`` a
    claimed 1.05× held at 0.84×)."""
    threshold = 1 + (floor - 1) / SLACK if floor > 1 else floor
    return "holds" if value >= threshold else f"off by {floor / value:.1f}× (lower)"


def costs_at_least(ratio: float, low: float, high: float) -> str:
    """The verdict on a claim that something keeps ``low``-``high`` of the speed
    (a cost of 1 - high to 1 - low); the slack widens the cost, not past no cost at all
    (with in_range's slack, a claimed 10-50% cost held at 0.96×: a 4% one)."""
    if ratio > 1 - (1 - high) / SLACK:
        return f"off: it costs {max(0.0, 1 - ratio):.0%}, not {1 - high:.0%}-{1 - low:.0%}"
    return in_range(ratio, low, high)


def does_not_apply(reason: str) -> str:
    return f"does not apply on this GPU: {reason}"
