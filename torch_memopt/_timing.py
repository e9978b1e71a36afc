"""One call of ``call`` timed with CUDA events on the current stream, in ms: the one
timer the probe (torch_memopt.probe.timing) and the end-to-end benchmarks
(benchmarks/latency.py) share. The events bracket the whole call, so host work that
outlasts the queued GPU work shows in the figure, as a user would see it."""
from __future__ import annotations

from typing import Callable

import torch


def cuda_event_ms(call: Callable[[], object]) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    call()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)
