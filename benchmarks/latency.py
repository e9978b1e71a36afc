"""Latency as a user sees it: the median wall time of whole calls, host work included
(CUDA events around each call on a GPU, perf_counter on the CPU), after 3 warm-up calls.
For end-to-end measurements (bench_model.py, tp_mlp.py), where the host's share is part
of the answer; kernel timings use do_bench with an L2 flush instead (tc_gemm/, norm_bench/).

Several calls compared with each other are timed interleaved (one sample of each in turn,
the order rotated every round), so a drift of the host's speed during the run lands on
all of them alike: timed one after another, the same GPT-2 decode step read 6.9 ms and
12.1 ms in two configurations of one run (H200 x2, 2026-11-30), host-bound either way."""
from __future__ import annotations

import statistics
import time
from typing import Callable

from torch_memopt._timing import cuda_event_ms


def sample_ms(call: Callable[[], object], device: str) -> float:
    """One timed call of ``call``, in ms."""
    if device == "cuda":
        return cuda_event_ms(call)
    begin = time.perf_counter()
    call()
    return (time.perf_counter() - begin) * 1e3


def interleaved_median_ms(calls: dict[str, Callable[[], object]], reps: int,
                          device: str) -> dict[str, float]:
    """Median of ``reps`` timed calls of each of ``calls``, in ms, sampled in rotating turns."""
    names = list(calls)
    for name in names:
        for _ in range(3):
            calls[name]()
    samples: dict[str, list[float]] = {name: [] for name in names}
    for rep in range(reps):
        shift = rep % len(names)
        for name in names[shift:] + names[:shift]:
            samples[name].append(sample_ms(calls[name], device))
    return {name: statistics.median(values) for name, values in samples.items()}


def median_ms(call: Callable[[], object], reps: int, device: str) -> float:
    """Median of ``reps`` timed calls of ``call``, in ms."""
    return interleaved_median_ms({"call": call}, reps, device)["call"]
