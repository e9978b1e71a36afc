"""One bench case, an (op, dtype, shape): build its input sets, check that ours agrees
with stock, time stock once and each requested variant of ours, and make the records.

The agreement check runs before any timing, on the first input set, and doubles as a
warm-up. A fast kernel that computes the wrong thing is no speedup, so each record
carries ``max_rel_err_vs_stock`` = max|ours - stock| / max|stock|, and the report flags
records above ``AGREEMENT_TOLERANCE``. The tolerances are loose on purpose, a few
output ulps of the dtype at these sizes: the tests hold the accuracy contract against
float64 references; this only catches a bench that times a broken kernel.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import torch
from torch.utils.benchmark import Measurement

from . import cases, harness, shapes

AGREEMENT_TOLERANCE = {torch.float32: 1e-3, torch.float16: 1e-2, torch.bfloat16: 3e-2}


@dataclass(frozen=True)
class Case:
    op: str
    dtype: torch.dtype
    shape: dict[str, int]
    variants: tuple[str, ...]


@dataclass
class Result:
    """One row of the summary and of the JSON ``results`` list."""

    op: str
    dtype: str
    shape: dict[str, int]
    variant: str
    stock: str
    ours_ms: float
    stock_ms: float
    ours_rate: float
    stock_rate: float
    rate_unit: str
    speedup_vs_stock: float
    max_rel_err_vs_stock: float | None
    input_sets: int

    @property
    def agrees_with_stock(self) -> bool:
        tolerance = AGREEMENT_TOLERANCE[getattr(torch, self.dtype)]
        return self.max_rel_err_vs_stock is not None and self.max_rel_err_vs_stock <= tolerance


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def max_relative_error(ours_out: torch.Tensor, stock_out: torch.Tensor) -> float | None:
    """max|ours - stock| / max|stock| in fp32; None when not finite (NaN, inf, bad shape)."""
    if ours_out.shape != stock_out.shape:
        return None
    reference = stock_out.float()
    scale = reference.abs().max().clamp_min(torch.finfo(torch.float32).tiny)
    error = ((ours_out.float() - reference).abs().max() / scale).item()
    return error if math.isfinite(error) else None


def run_case(
    case: Case,
    device: torch.device,
    *,
    min_run_time: float,
    l2_bytes: int,
    before_each_timer: Callable[[str], None],
) -> tuple[list[Measurement], list[Result]]:
    """Time ``case``; ``before_each_timer`` gets a one-line description of each timing."""
    op_case = cases.CASES[case.op]
    first_set = op_case.make_inputs(case.shape, case.dtype, device)
    set_count = harness.input_set_count(cases.input_bytes(first_set), l2_bytes)
    input_sets = [first_set] + [
        op_case.make_inputs(case.shape, case.dtype, device) for _ in range(set_count - 1)
    ]
    ours_fns = {variant: cases.ours(case.op, variant) for variant in case.variants}

    stock_out = op_case.stock(*first_set)
    errors = {v: max_relative_error(fn(*first_set), stock_out) for v, fn in ours_fns.items()}
    del stock_out

    dtype = dtype_name(case.dtype)
    shape = shapes.shape_text(case.shape)
    where = dict(label=case.op, sub_label=f"{dtype} {shape}", min_run_time=min_run_time)

    before_each_timer(f"{case.op} {dtype} {shape} {op_case.stock_name}")
    stock_timing = harness.time_call(op_case.stock, input_sets, description=op_case.stock_name, **where)
    measurements = [stock_timing]
    for variant, fn in ours_fns.items():
        before_each_timer(f"{case.op} {dtype} {shape} memopt {variant}")
        measurements.append(
            harness.time_call(fn, input_sets, description=f"memopt {variant}", **where)
        )

    amount, unit = shapes.work(case.op, case.shape, case.dtype)
    results = [
        Result(
            op=case.op,
            dtype=dtype,
            shape=dict(case.shape),
            variant=variant,
            stock=op_case.stock_name,
            ours_ms=ours_timing.median * 1e3,
            stock_ms=stock_timing.median * 1e3,
            ours_rate=shapes.rate(amount, unit, ours_timing.median),
            stock_rate=shapes.rate(amount, unit, stock_timing.median),
            rate_unit=unit,
            speedup_vs_stock=stock_timing.median / ours_timing.median,
            max_rel_err_vs_stock=errors[variant],
            input_sets=set_count,
        )
        for variant, ours_timing in zip(case.variants, measurements[1:])
    ]
    return measurements, results
