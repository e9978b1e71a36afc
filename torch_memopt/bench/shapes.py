"""Default shapes for the bench, and the formulas that turn a time into a rate.

Shapes are dicts of named dimensions, in the order they are printed:
gemm and linear are ``M x N x K`` (``a [M, K] @ b [K, N]``; for linear, M rows of
input against a weight ``[N, K]``); the norms and softmax are ``rows x N``, reduced
over the last dimension N.

Why these sizes. The CUDA kernels of the ladders start naive (the naive gemm runs at
about 0.5 TFLOP/s on an H200, so one fp32 4096^3 call takes about 0.3 s), so the CUDA
sets are large enough to leave the L2 and reach steady state, yet bounded so that a
full run stays within a few minutes and ``--quick`` within a minute. The odd 4095^3
gemm is where cuBLAS is weak (see /work/shared/ANCHORS.md) and where tails show up.
Norm and softmax shapes follow the peers measured in ANCHORS.md: transformer hidden
sizes (1024, 4096, 12288) and one long softmax row (131072). The CPU sets are tiny: the
CPU kernels are references for correctness, and a CPU ``--quick`` run over every op
and dtype must finish in seconds on two cores.
"""
from __future__ import annotations

import torch

OPS = ("gemm", "linear", "layer_norm", "rms_norm", "softmax")

MATMUL_OPS = ("gemm", "linear")

_CUDA_FULL = {
    "gemm": [(1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (4095, 4095, 4095)],
    "linear": [(4096, 4096, 1024), (8192, 4096, 4096)],
    "norm": [(32768, 1024), (16384, 4096), (4096, 12288)],
    "softmax": [(32768, 1024), (16384, 4096), (1024, 131072)],
}
_CUDA_QUICK = {
    "gemm": [(1024, 1024, 1024), (2048, 2048, 2048)],
    "linear": [(4096, 1024, 1024)],
    "norm": [(4096, 1024), (8192, 4096)],
    "softmax": [(4096, 1024), (8192, 4096)],
}
_CPU_FULL = {
    "gemm": [(128, 128, 128), (256, 256, 256), (127, 129, 131)],
    "linear": [(256, 256, 256), (255, 129, 128)],
    "norm": [(256, 1024), (1024, 1024), (255, 1000)],
    "softmax": [(256, 1024), (1024, 1024), (255, 1000)],
}
_CPU_QUICK = {
    "gemm": [(128, 128, 128)],
    "linear": [(128, 128, 128)],
    "norm": [(256, 1024)],
    "softmax": [(256, 1024)],
}


def default_shapes(op: str, device_type: str, quick: bool) -> list[dict[str, int]]:
    """The shapes ``op`` is timed on, as dicts of named dimensions."""
    if device_type == "cuda":
        table = _CUDA_QUICK if quick else _CUDA_FULL
    else:
        table = _CPU_QUICK if quick else _CPU_FULL
    if op in MATMUL_OPS:
        return [dict(M=m, N=n, K=k) for m, n, k in table[op]]
    key = "softmax" if op == "softmax" else "norm"
    return [dict(rows=rows, N=n) for rows, n in table[key]]


def shape_text(shape: dict[str, int]) -> str:
    """``1024x1024x1024``: the dims in their named order (see the module docstring)."""
    return "x".join(str(size) for size in shape.values())


def work(op: str, shape: dict[str, int], dtype: torch.dtype) -> tuple[float, str]:
    """The work one call does, and the unit of its rate.

    gemm and linear: FLOP = 2*M*N*K (one multiply and one add per term); the bias add
    of linear (M*N) is left out, under 1/K of the total. Rate in TFLOP/s.

    Norms and softmax are memory bound, so they are rated by the bytes they must move
    at least, each read or written once, in GB/s:
      layer_norm: input + output (rows*N each) + weight + bias (N each)
      rms_norm:   input + output (rows*N each) + weight (N)
      softmax:    input + output (rows*N each)
    The bench keeps weight and bias in the input dtype, so every element is
    ``dtype.itemsize`` bytes.
    """
    if op in MATMUL_OPS:
        return 2.0 * shape["M"] * shape["N"] * shape["K"], "TFLOP/s"
    rows, n = shape["rows"], shape["N"]
    params_per_row = {"layer_norm": 2, "rms_norm": 1, "softmax": 0}[op]
    elements = 2 * rows * n + params_per_row * n
    return float(elements * dtype.itemsize), "GB/s"


def rate(amount: float, unit: str, seconds: float) -> float:
    """``amount`` of work (FLOP or bytes) done in ``seconds``, in ``unit``."""
    scale = {"TFLOP/s": 1e12, "GB/s": 1e9}[unit]
    return amount / seconds / scale
