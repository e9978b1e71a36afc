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
    """The verdict on a claim that a ratio or speed-up is at least ``floor``."""
    return "holds" if value >= floor / SLACK else f"off by {floor / value:.1f}× (lower)"


def does_not_apply(reason: str) -> str:
    return f"does not apply on this GPU: {reason}"
