"""The CUDA side of the norm / softmax run: inputs on the GPU, the calls, the timers and
the device-to-device copy ceiling. ``measure.measure_case`` only talks to an object
with these methods, so the tests drive it on the CPU with a fake one.

Timing and the copy ceiling are tc_gemm's, so the two runs' figures compare: the
primary figure is ``triton.testing.do_bench(fn, return_mode="median")`` (a 256 MB
buffer zeroed before every timed call, the call alone between two CUDA events, at
least ten calls), or the same flush-then-event protocol without triton; the ceiling
is a 2 GiB device-to-device copy, bytes read + written.
"""
from __future__ import annotations

from typing import Callable

import torch

from tc_gemm.backend import CudaBackend as GemmBackend

from . import calls
from .cases import Case


class CudaBackend:
    def __init__(self, *, rep_ms: float):
        # tc_gemm's backend for its timers and copy; its Timer cross-check is not used.
        self.timing = GemmBackend(rep_ms=rep_ms, timer_min_run_time=0.0)
        self.have_do_bench = self.timing.have_do_bench

    def inputs(self, case: Case, dtype: str) -> tuple:
        return calls.make_inputs(case, getattr(torch, dtype), "cuda")

    def function(self, case: Case, name: str) -> Callable[..., torch.Tensor]:
        return calls.function(case.op, name)

    def probe_ms(self, call: Callable[[], object]) -> float:
        return self.timing.probe_ms(call)

    def time(self, call: Callable[[], object], probe_ms: float) -> tuple[float, str]:
        """(median ms, method) for a call that took ``probe_ms`` once, warm."""
        return self.timing.time(call, probe_ms)

    def copy_bandwidth(self) -> dict:
        return self.timing.copy_bandwidth()
