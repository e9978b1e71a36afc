"""What each benchmarked op is: its inputs, our call, the stock call, the float64
reference, the work one call does and the error it may have. Every suite builds its
cases from these, so the formulas exist once.

Shapes are dicts of named dims, printed in order: gemm and linear ``M x N x K``
(``a [M, K] @ b [K, N]``; linear's weight is ``[N, K]``), the norms, the fused add +
norms and softmax ``rows x N``, reduced over N. Options: linear's ``bias`` (bool) and
``activation``; the norms' ``eps``.

Inputs are fresh ``torch.randn`` draws, never zeros or ones (a kernel may shortcut
them, and real activations are neither); operands contracted over K are scaled by
1/sqrt(K), so fp16 outputs stay far from overflow. Norm weights are in the input dtype,
as after ``module.half()``. Ours and the stock call take the same positional inputs.
"""
from __future__ import annotations

import contextlib
import functools
import math
from typing import Callable, Iterator

import torch
import torch.nn.functional as F

import torch_memopt

OPS = ("gemm", "linear", "layer_norm", "rms_norm", "softmax", "add_rms_norm", "add_layer_norm")
MATMUL_OPS = ("gemm", "linear")
LAYER_NORM_EPS = 1e-5
# F.rms_norm (and ours) read eps=None as float32's eps for fp32 and 16-bit inputs (the
# op math type); the float64 reference must be given it, or it would use float64's.
RMS_NORM_DEFAULT_EPS = torch.finfo(torch.float32).eps
ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "none": lambda t: t,
    "relu": F.relu,
    "gelu": F.gelu,
    "gelu_tanh": functools.partial(F.gelu, approximate="tanh"),
    "silu": F.silu,
}
# Relative Frobenius error against float64: fp32 accumulates in other orders (~1e-6
# at K = 14336, so 1e-4 catches a wrong tile without flagging summation order); a
# 16-bit output rounds at ~2e-3 (bf16) and ~3e-4 (fp16).
TOLERANCE = {"float32": 1e-4, "float16": 5e-3, "bfloat16": 1e-2}
NORM_FP32_TOLERANCE = 1e-5  # no long sums in fp32: the norms and softmax hold 1e-5


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def shape_text(shape: dict[str, int]) -> str:
    """``1024x1024x1024``: the dims in their named order."""
    return "x".join(str(size) for size in shape.values())


def matmul_shape(m: int, n: int, k: int) -> dict[str, int]:
    return {"M": m, "N": n, "K": k}


def rows_shape(rows: int, n: int) -> dict[str, int]:
    return {"rows": rows, "N": n}


def _randn(*size: int, dtype: torch.dtype, device, scale: float = 1.0) -> torch.Tensor:
    values = torch.randn(*size, device=device, dtype=dtype)
    return values.mul_(scale) if scale != 1.0 else values


def make_inputs(op: str, shape: dict, dtype: torch.dtype, device, options: dict) -> tuple:
    """One fresh input set of ``op``: the positional arguments of ours and of stock."""
    if op in MATMUL_OPS:
        m, n, k = shape["M"], shape["N"], shape["K"]
        a = _randn(m, k, dtype=dtype, device=device)  # [M, K]
        if op == "gemm":
            return a, _randn(k, n, dtype=dtype, device=device, scale=k ** -0.5)  # [K, N]
        weight = _randn(n, k, dtype=dtype, device=device, scale=k ** -0.5)  # [N, K]
        bias = _randn(n, dtype=dtype, device=device) if options.get("bias") else None
        return a, weight, bias
    rows, n = shape["rows"], shape["N"]
    x = _randn(rows, n, dtype=dtype, device=device)
    if op == "softmax":
        return x, -1
    weight = _randn(n, dtype=dtype, device=device)
    if op == "rms_norm":
        return x, (n,), weight
    if op == "layer_norm":
        return x, (n,), weight, _randn(n, dtype=dtype, device=device)
    residual = _randn(rows, n, dtype=dtype, device=device)
    if op == "add_rms_norm":
        return x, residual, (n,), weight
    return x, residual, (n,), weight, _randn(n, dtype=dtype, device=device)


def _eps(op: str, options: dict):
    if op in ("rms_norm", "add_rms_norm"):
        return options.get("eps")
    return options.get("eps", LAYER_NORM_EPS)


def ours(op: str, variant: str, options: dict) -> Callable:
    """Our op through its public wrapper, pinned to ``variant``."""
    fn = getattr(torch_memopt, op)
    if op in ("gemm", "softmax"):
        return functools.partial(fn, variant=variant)
    if op == "linear":
        return functools.partial(fn, activation=options.get("activation", "none"), variant=variant)
    eps = _eps(op, options)
    if op in ("rms_norm", "add_rms_norm"):
        return lambda *args: fn(*args, eps, variant=variant)
    return lambda *args: fn(*args, eps=eps, variant=variant)


def stock(op: str, options: dict) -> Callable:
    """The PyTorch calls ``op`` replaces, on the same inputs; add + norm returns
    ``(normalized, sum)`` as ours does."""
    eps = _eps(op, options)
    if op == "gemm":
        return torch.mm
    if op == "linear":
        activation = ACTIVATIONS[options.get("activation", "none")]
        return lambda x, weight, bias: activation(F.linear(x, weight, bias))
    if op == "softmax":
        return torch.softmax
    if op == "rms_norm":
        return lambda x, shape, weight: F.rms_norm(x, shape, weight, eps)
    if op == "layer_norm":
        return lambda x, shape, weight, bias: F.layer_norm(x, shape, weight, bias, eps)
    if op == "add_rms_norm":
        def add_rms_norm(x, residual, shape, weight):
            total = x + residual
            return F.rms_norm(total, shape, weight, eps), total
        return add_rms_norm

    def add_layer_norm(x, residual, shape, weight, bias):
        total = x + residual
        return F.layer_norm(total, shape, weight, bias, eps), total
    return add_layer_norm


def reference(op: str, inputs: tuple, options: dict):
    """The stock computation in float64 on the inputs' device. The fused add + norms'
    sum is rounded to the input dtype first, as every implementation computes it."""
    wide = [arg.double() if isinstance(arg, torch.Tensor) else arg for arg in inputs]
    options = dict(options)
    if op in ("rms_norm", "add_rms_norm") and options.get("eps") is None:
        options["eps"] = RMS_NORM_DEFAULT_EPS
    if op in ("add_rms_norm", "add_layer_norm"):
        x, residual = inputs[0], inputs[1]
        total = (x + residual).double()
        norm_op = op.removeprefix("add_")
        return stock(norm_op, options)(total, *wide[2:]), total
    with fp32_matmul_without_tf32():
        return stock(op, options)(*wide)


def work(op: str, shape: dict, dtype: torch.dtype, options: dict) -> tuple[float | None, float]:
    """(FLOP, bytes) of one call. FLOP: 2·M·N·K for the matmuls (bias and activation,
    under 1/K of it, left out), None for the rest. Bytes: the least any implementation
    must move, each input read and each output written once, in ``dtype``:
      gemm / linear   A [M, K] + B [K, N] + C [M, N] (+ the bias, N)
      layer_norm      input + output (rows·N each) + weight + bias (N each)
      rms_norm        input + output + weight
      softmax         input + output
      add_rms_norm    input + residual + sum + output (rows·N each) + weight
      add_layer_norm  the same + bias
    """
    size = dtype.itemsize
    if op in MATMUL_OPS:
        m, n, k = shape["M"], shape["N"], shape["K"]
        bias = n if options.get("bias") else 0
        return 2.0 * m * n * k, float(size * (m * k + k * n + m * n + bias))
    rows, n = shape["rows"], shape["N"]
    streams = 4 if op.startswith("add_") else 2
    params = {"layer_norm": 2, "add_layer_norm": 2, "rms_norm": 1, "add_rms_norm": 1}.get(op, 0)
    return None, float(size * (streams * rows * n + params * n))


def tolerance(op: str, dtype: torch.dtype) -> float:
    name = dtype_name(dtype)
    if name == "float32" and op not in MATMUL_OPS:
        return NORM_FP32_TOLERANCE
    return TOLERANCE[name]


def relative_error(out, ref) -> float:
    """‖out − ref‖ / ‖ref‖ in float64 (the worst over a tuple of outputs); inf for a
    wrong shape or a non-finite value, which no tolerance admits."""
    if isinstance(ref, tuple):
        if not isinstance(out, tuple) or len(out) != len(ref):
            return math.inf
        return max(relative_error(o, r) for o, r in zip(out, ref))
    if not isinstance(out, torch.Tensor) or out.shape != ref.shape:
        return math.inf
    norm = torch.linalg.vector_norm
    ref64 = ref.double()
    value = float(norm(out.double() - ref64) / norm(ref64).clamp_min(1e-300))
    return value if math.isfinite(value) else math.inf


@contextlib.contextmanager
def matmul_tf32(enabled: bool) -> Iterator[None]:
    """torch.backends.cuda.matmul.allow_tf32 set to `enabled` for the block, the
    caller's setting restored after (also the fuzzer's switch onto the tf32 path)."""
    saved = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = enabled
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved


def fp32_matmul_without_tf32() -> contextlib.AbstractContextManager:
    """Keep cuBLAS on true fp32 while timing, then restore the caller's setting: with
    TF32 on, torch.mm in fp32 runs on tensor cores with a 10-bit mantissa, a different,
    less accurate computation than our fp32 kernels, and no peer for them."""
    return matmul_tf32(False)
