"""Results JSON written strictly: every non-finite float becomes None (JSON has no
inf or NaN, and a run must not lose its results to one odd figure at the end).
Shared by the probe's JSON (torch_memopt/probe/record.py) and the benchmarks'
(benchmarks/ladder/json_safe.py re-exports it for tc_gemm.py, norm_bench/ and the rest)."""
from __future__ import annotations

import math


def json_safe(value):
    """``value`` with every non-finite float replaced by None, through dicts, lists
    and tuples."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    return value
