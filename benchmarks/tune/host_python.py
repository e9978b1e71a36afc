"""What a call of our Python wrappers costs the host before any kernel, against the stock
op and against the op called through its packet (``torch.ops.memopt.softmax(...)``) or
its overload (``torch.ops.memopt.softmax.default(...)``), with and without the ``variant``
keyword. On a 1 x 8 CPU tensor, so the kernels cost next to nothing and any machine,
CI's included, can run it; the CUDA path adds the launch on top of the same Python.

    python benchmarks/tune/host_python.py

Median over 15 runs of 2000 calls, µs a call, under inference_mode.
"""
from __future__ import annotations

import statistics
import timeit

import torch
import torch.nn.functional as F

from torch_memopt import ops

RUNS, CALLS = 15, 2000


def us_per_call(call) -> float:
    """Median µs a call of ``call`` (RUNS runs of CALLS calls, after CALLS warm calls)."""
    for _ in range(CALLS):
        call()
    return statistics.median(timeit.timeit(call, number=CALLS) / CALLS * 1e6 for _ in range(RUNS))


def main() -> int:
    x, g, b = torch.randn(1, 8), torch.randn(8), torch.randn(8)
    memopt = torch.ops.memopt
    cases = {
        "softmax: torch.softmax": lambda: torch.softmax(x, -1),
        "softmax: ops.softmax": lambda: ops.softmax(x, -1),
        "softmax: packet, variant=": lambda: memopt.softmax(x, -1, None, variant="auto"),
        "softmax: packet": lambda: memopt.softmax(x, -1, None),
        "softmax: overload": lambda: memopt.softmax.default(x, -1, None),
        "layer_norm: F.layer_norm": lambda: F.layer_norm(x, (8,), g, b),
        "layer_norm: ops.layer_norm": lambda: ops.layer_norm(x, (8,), g, b),
        "layer_norm: packet, variant=": lambda: memopt.layer_norm(x, [8], g, b, 1e-5,
                                                                  variant="auto"),
        "layer_norm: overload": lambda: memopt.layer_norm.default(x, [8], g, b, 1e-5),
        "linear: F.linear": lambda: F.linear(x, g.expand(8, 8)),
        "linear: ops.linear": lambda: ops.linear(x, g.expand(8, 8)),
        "linear: packet": lambda: memopt.linear(x, g.expand(8, 8), None),
    }
    with torch.inference_mode():
        for name, call in cases.items():
            print(f"{name:32s} {us_per_call(call):6.2f} us", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
