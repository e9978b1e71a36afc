"""The probes' timer: the median of a few whole calls after one warm-up, in ms, through
the benchmarks' timing core (torch_memopt.bench.timing). No L2 flush: each probe sizes
its data for the level it measures."""
from __future__ import annotations

from typing import Callable

from torch_memopt.bench import timing


def median_ms(call: Callable[[], object], reps: int = 5) -> float:
    return timing.median_ms(call, reps, "cuda", warmup=1)


def gbps(nbytes: float, ms: float) -> float:
    return nbytes / (ms * 1e-3) / 1e9
