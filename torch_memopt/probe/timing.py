"""Timing a probe op with CUDA events: the median of a few calls after one warm-up,
in ms. The probes are small kernels on this one GPU; no L2 flush: each probe sizes its
data for the level it measures."""
from __future__ import annotations

import statistics
from typing import Callable

import torch


def median_ms(call: Callable[[], object], reps: int = 5) -> float:
    call()
    samples = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end))
    return statistics.median(samples)


def gbps(nbytes: float, ms: float) -> float:
    return nbytes / (ms * 1e-3) / 1e9
