"""Timing: one ``torch.utils.benchmark.Timer`` per call, identical for ours and stock.

What is measured. ``Timer.blocked_autorange`` first grows a block of back-to-back
calls until the timer overhead is negligible (this also warms up: lazy module loads,
cuBLAS handles, the caching allocator), then times blocks until ``min_run_time`` has
passed. On CUDA the Timer synchronizes the device around every block, so a block's
time covers the kernels, not only their launch. We report the median block time per
call; the median resists the odd slow block (a clock change, another process).

L2 flush. Re-running an op on the same inputs would find them in the L2 cache (60 MB
on an H200) and time a cache, not HBM. So each call reads the next of several
independent input sets, in rotation, whose total size is at least twice the L2 size:
by the time a set comes round again, everything else read since has evicted it. The
number of sets is clamped to [2, MAX_INPUT_SETS]: two at least, so no call follows a
call on its own inputs; at most 16, because the smallest default CUDA input set (a
4096x1024 fp16 softmax input, 8 MiB) needs 15 to cover 2 x 60 MiB. Ours and stock are
timed on the very same sets, in the same order, by the same statement, so the
rotation's bookkeeping (one ``next`` on an ``itertools.cycle``, well under a
microsecond) costs both sides alike. Outputs are not rotated: each call gets a fresh
one from the caching allocator, as it would in a model. On CPU nothing is rotated:
the caches are per core and the CPU kernels are references, not tuned targets.
"""
from __future__ import annotations

import itertools
import math
from typing import Callable, Sequence

import torch
from torch.utils.benchmark import Measurement, Timer

L2_MULTIPLE = 2
MAX_INPUT_SETS = 16
TIMER_THREADS = 1


def l2_cache_bytes(device: torch.device) -> int:
    """The L2 size of a CUDA device; 0 on CPU, where nothing is rotated."""
    if device.type != "cuda":
        return 0
    return torch.cuda.get_device_properties(device).L2_cache_size


def input_set_count(set_bytes: int, l2_bytes: int) -> int:
    """How many input sets to rotate so they total at least L2_MULTIPLE x the L2 size."""
    if l2_bytes == 0:
        return 1
    needed = math.ceil(L2_MULTIPLE * l2_bytes / max(set_bytes, 1))
    return max(2, min(MAX_INPUT_SETS, needed))


def time_call(
    fn: Callable,
    input_sets: Sequence[tuple],
    *,
    label: str,
    sub_label: str,
    description: str,
    min_run_time: float,
) -> Measurement:
    """Time ``fn(*input_set)`` over ``input_sets`` in rotation; see the module docstring.

    ``label``, ``sub_label`` and ``description`` place the measurement in the
    ``Compare`` table: one table per label, one row per sub_label, one column per
    description. The Timer keeps its default of one thread: CPU figures then do not
    swing with how busy the other cores are (on a loaded two-core machine, one more
    OpenMP thread turned a 0.45 ms softmax into 12.8 ms), and ours and stock get the
    same single thread.
    """
    timer = Timer(
        stmt="fn(*next(input_sets))",
        globals={"fn": fn, "input_sets": itertools.cycle(input_sets)},
        label=label,
        sub_label=sub_label,
        description=description,
        num_threads=TIMER_THREADS,
    )
    return timer.blocked_autorange(min_run_time=min_run_time)
