"""What each measured call runs. Ours, eager, torch.compile and Liger all take the same
positional inputs, the bench's (``torch_memopt.bench.cases``): ``(x, (N,), weight,
bias)`` for layer_norm, ``(x, (N,), weight)`` for rms_norm, ``(x, -1)`` for softmax,
with weight and bias in x's dtype. The float64 reference is made from the same inputs.
"""
from __future__ import annotations

from typing import Callable

import torch
import torch.nn.functional as F

from tc_gemm.measure import _first_line as first_line
from torch_memopt.bench.cases import CASES, ours

from .cases import COMPILE, EAGER, LIGER, Case

LAYER_NORM_EPS = 1e-5
# F.rms_norm (and ours) take eps=None as float32's eps for fp32 and bf16 inputs; the
# reference, in float64, must be given it, or it would use float64's.
RMS_NORM_EPS = torch.finfo(torch.float32).eps


def make_inputs(case: Case, dtype: torch.dtype, device) -> tuple:
    """Fresh standard normals (never zeros or ones: a kernel may shortcut them)."""
    return CASES[case.op].make_inputs(case.shape(), dtype, torch.device(device))


def reference(op: str, inputs: tuple) -> torch.Tensor:
    """The stock op on every input in float64."""
    x, *rest = (arg.double() if isinstance(arg, torch.Tensor) else arg for arg in inputs)
    if op == "layer_norm":
        return F.layer_norm(x, *rest, eps=LAYER_NORM_EPS)
    if op == "rms_norm":
        return F.rms_norm(x, *rest, eps=RMS_NORM_EPS)
    return torch.softmax(x, *rest)


def compiled(op: str) -> Callable[..., torch.Tensor]:
    """torch.compile (default mode) of the eager op, for one shape and dtype.

    The stock op is wrapped in a Python function because dynamo traces Python frames
    (torch.softmax is a builtin). ``torch._dynamo.reset()`` first: every case shares
    the wrapper's code object, and past the recompile limit (8) dynamo would fall back
    to eager without a word. ``dynamic=False``: a kernel specialized to the shape, what
    a model with fixed shapes gets."""
    torch._dynamo.reset()
    stock = CASES[op].stock

    def peer(*args):
        return stock(*args)

    return torch.compile(peer, dynamic=False)


def liger_missing() -> str | None:
    """Why Liger-Kernel is not a peer here, or None when it is importable."""
    try:
        import liger_kernel  # noqa: F401
    except Exception as exc:
        return f"liger_kernel is not importable ({first_line(exc)})"
    return None


def liger_version() -> str | None:
    try:
        from importlib.metadata import version

        return version("liger-kernel")
    except Exception:
        return None


def liger(op: str) -> Callable[..., torch.Tensor]:
    """Liger-Kernel's forward through its autograd Functions (the layer its modules
    call), with the same eps as ours; rms_norm in its default casting mode ("llama")."""
    if op == "layer_norm":
        from liger_kernel.ops.layer_norm import LigerLayerNormFunction

        def layer_norm(x, normalized_shape, weight, bias):
            return LigerLayerNormFunction.apply(x, weight, bias, LAYER_NORM_EPS)

        return layer_norm
    if op == "rms_norm":
        from liger_kernel.ops.rms_norm import LigerRMSNormFunction

        def rms_norm(x, normalized_shape, weight):
            return LigerRMSNormFunction.apply(x, weight, RMS_NORM_EPS)

        return rms_norm
    from liger_kernel.ops.softmax import LigerSoftmaxFunction

    def softmax(x, dim):  # Liger's softmax is over the last dim, the only one measured
        return LigerSoftmaxFunction.apply(x)

    return softmax


def function(op: str, name: str) -> Callable[..., torch.Tensor]:
    """The call named ``name``: a peer, or a variant of ours through its public wrapper."""
    if name == EAGER:
        return CASES[op].stock
    if name == COMPILE:
        return compiled(op)
    if name == LIGER:
        return liger(op)
    return ours(op, name)
