"""softmax's held rows (softmax_launch.cuh's held_shape / launch_cluster_held) as the
tests see them: the (threads, CTAs) a width takes, the rows from which auto takes it,
and which held kernel a call launched."""

import math
import re

import torch

from cuda_kernels import kernels_run

SHAPES = ((512, 4), (512, 8), (1024, 8))  # (threads, CTAs) of a row, fewest first
THREAD_ELEMS = 64  # 8 packs of 8 16-bit elements a thread, as loaded


def sms() -> int:
    return torch.cuda.get_device_properties(0).multi_processor_count


def held_shape(n: int) -> tuple[int, int]:
    """(threads, CTAs) a row the rule gives n columns; CTAs 0 past 8 x 1024 threads'."""
    return next(((t, c) for t, c in SHAPES if n <= t * THREAD_ELEMS * c), (1024, 0))


def fill_rows(n: int) -> int:
    """The fewest rows whose CTAs take every SM's 1024 threads: where auto takes it."""
    threads, ctas = held_shape(n)
    return math.ceil(sms() * 1024 / (threads * ctas))


def held_cluster_run(fn) -> tuple[int, int]:
    """(threads, CTAs) of the held cluster kernel fn launched, (0, 0) if it did not."""
    names = kernels_run(fn)
    found = [re.search(r"softmax_cluster_kernel<[^<>]*?, (\d+), 16, (\d), 8, true>", n)
             for n in names]
    if len(names) == 1 and found[0]:
        return int(found[0].group(1)), int(found[0].group(2))
    return 0, 0
