"""The float64 references the fuzzer holds each op to, and how close it must come.

Each reference computes from the op's inputs as given (already rounded to their
dtype), in float64 on the CPU, by the op's definition: the error left is the op's own
(fp32 accumulation, the output's rounding). rms_norm is x * rsqrt(mean(x^2) + eps) as
written, which torch's fused CUDA kernel is not at every width for rows holding an inf
(it returns NaN for the whole row at N = 2050 and zeros for the finite elements at 4096)."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

ACTIVATIONS = {
    "none": lambda x: x,
    "relu": F.relu,
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "silu": F.silu,
}


def _d(t):
    return None if t is None else t.detach().to(device="cpu", dtype=torch.float64)


def gemm(a, b):
    return _d(a) @ _d(b)


def linear(input, weight, bias=None, activation="none"):
    return ACTIVATIONS[activation](F.linear(_d(input), _d(weight), _d(bias)))


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    return F.layer_norm(_d(input), list(normalized_shape), _d(weight), _d(bias), eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    x = _d(input)
    dims = tuple(range(-len(normalized_shape), 0))
    eps = torch.finfo(torch.float32).eps if eps is None else eps
    out = x * torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + eps)
    return out if weight is None else out * _d(weight)


def _add(input, residual):
    """input + residual rounded to their dtype, as the stock add gives it."""
    return (input + residual).to("cpu")


def add_layer_norm(input, residual, normalized_shape, weight=None, bias=None, eps=1e-5):
    s = _add(input, residual)
    return layer_norm(s, normalized_shape, weight, bias, eps), s


def add_rms_norm(input, residual, normalized_shape, weight=None, eps=None):
    s = _add(input, residual)
    return rms_norm(s, normalized_shape, weight, eps), s


def softmax(input, dim=-1, dtype=None):
    x = input if dtype is None else input.to(dtype)  # torch's cast first, then softmax
    return torch.softmax(_d(x), dim)


REFERENCES = {"gemm": gemm, "linear": linear, "layer_norm": layer_norm, "rms_norm": rms_norm,
              "add_layer_norm": add_layer_norm, "add_rms_norm": add_rms_norm, "softmax": softmax}

# Relative error (Frobenius norm of the difference over the reference's) allowed for
# an output of each dtype: the output's rounding (2^-8 in bf16, 2^-11 in fp16) and fp32
# accumulation. GEMMs grow with the reduction length (fp32 sums of K products).
_BASE = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1e-2}


# tf32 keeps 10 of float32's 23 mantissa bits in the products: 2^-11 each.
_TF32 = 5e-3


def tolerance(op: str, dtype: torch.dtype, reduction: int, tf32: bool = False) -> float:
    if tf32 and dtype == torch.float32:
        return _TF32
    base = _BASE[dtype]
    if op in ("gemm", "linear"):
        return base * max(1.0, math.sqrt(reduction / 64)) if dtype == torch.float32 else 2.5 * base
    return base


def compare(out: torch.Tensor, ref: torch.Tensor, tol: float) -> str | None:
    """None when `out` matches `ref`: the same shape, NaN where the reference is NaN and
    only there, the same infinities, and the finite part within `tol`; else what differs."""
    if tuple(out.shape) != tuple(ref.shape):
        return f"shape {tuple(out.shape)}, expected {tuple(ref.shape)}"
    got = out.detach().to(device="cpu", dtype=torch.float64)
    if not torch.equal(got.isnan(), ref.isnan()):
        return f"NaN at {int((got.isnan() != ref.isnan()).sum())} elements where the reference differs"
    inf = ref.isinf()
    if not torch.equal(got[inf], ref[inf]) or bool(got[~inf & ~ref.isnan()].isinf().any()):
        return "infinities differ from the reference"
    finite = ref.isfinite()
    if not bool(finite.any()):
        return None
    diff = (got[finite] - ref[finite]).norm().item()
    scale = ref[finite].norm().item()
    err = diff / scale if scale > 0 else diff
    return None if err <= tol else f"relative error {err:.3e} > {tol:.1e}"
