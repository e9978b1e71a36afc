"""The CUDA side of a ladder run: fresh inputs, the functions timed, and the timers.

``measure.measure_size`` only talks to an object with these methods, so the tests
drive it on the CPU with a fake one.
"""
from __future__ import annotations

from typing import Callable

import torch

import torch_memopt  # noqa: F401  (registers torch.ops.memopt)
from torch_memopt.bench.cases import fp32_matmul_without_tf32 as fp32_cublas  # noqa: F401

from . import timing
from .rungs import CUBLAS, Size


def gemm_function(variant: str) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    """cuBLAS (``torch.mm``) or one rung of ``torch.ops.memopt.gemm``."""
    if variant == CUBLAS:
        return torch.mm
    op = torch.ops.memopt.gemm

    def rung(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return op(a, b, variant=variant)

    return rung


def fresh_inputs(size: Size, count: int, device: str = "cuda") -> list[tuple[torch.Tensor, ...]]:
    """``count`` independent (A [M, K], B [K, N]) fp32 pairs of standard normals."""
    return [
        (
            torch.randn(size.M, size.K, device=device, dtype=torch.float32),
            torch.randn(size.K, size.N, device=device, dtype=torch.float32),
        )
        for _ in range(count)
    ]


class CudaBackend:
    def __init__(self, *, rep_ms: float, timer_min_run_time: float):
        self.rep_ms = rep_ms
        self.timer_min_run_time = timer_min_run_time
        self.have_do_bench = timing.have_do_bench()
        self.l2_bytes = torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size

    def inputs(self, size: Size, count: int):
        return fresh_inputs(size, count)

    def function(self, variant: str):
        return gemm_function(variant)

    def probe_ms(self, call: Callable[[], object]) -> float:
        return timing.event_ms(call)

    def time(self, call: Callable[[], object], estimate_ms: float) -> tuple[float, timing.Plan]:
        plan = timing.plan_for(estimate_ms, rep_ms=self.rep_ms, have_do_bench=self.have_do_bench)
        return timing.time_planned(call, plan), plan

    def cross_set_count(self, size: Size) -> int:
        from torch_memopt.bench.harness import input_set_count

        return input_set_count(4 * (size.M * size.K + size.K * size.N), self.l2_bytes)

    def cross(self, fn, input_sets, label: str) -> float:
        return timing.time_blocked_autorange(
            fn, input_sets, label=label, min_run_time=self.timer_min_run_time
        )
