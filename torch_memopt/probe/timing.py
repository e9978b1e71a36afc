"""Timing a probe op with CUDA events: the median of a few calls after one warm-up,
in ms. The probes are small kernels on this one GPU; no L2 flush: each probe sizes its
data for the level it measures."""
from __future__ import annotations

import statistics
from typing import Callable

from torch_memopt._timing import cuda_event_ms


def median_ms(call: Callable[[], object], reps: int = 5) -> float:
    call()
    return statistics.median(cuda_event_ms(call) for _ in range(reps))


def gbps(nbytes: float, ms: float) -> float:
    return nbytes / (ms * 1e-3) / 1e9
