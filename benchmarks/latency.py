"""Latency as a user sees it: the median wall time of whole calls, host work included
(CUDA events around each call on a GPU, perf_counter on the CPU), after 3 warm-up calls.
For end-to-end measurements (bench_model.py, tp_mlp.py), where the host's share is part
of the answer; kernel timings use do_bench with an L2 flush instead (tc_gemm/, norm_bench/)."""
from __future__ import annotations

import statistics
import time
from typing import Callable

import torch


def median_ms(call: Callable[[], object], reps: int, device: str) -> float:
    """Median of ``reps`` timed calls of ``call``, in ms."""
    for _ in range(3):
        call()
    samples = []
    for _ in range(reps):
        if device == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            call()
            end.record()
            end.synchronize()
            samples.append(start.elapsed_time(end))
        else:
            begin = time.perf_counter()
            call()
            samples.append((time.perf_counter() - begin) * 1e3)
    return statistics.median(samples)
