"""Typed wrappers over ``torch.ops.memopt.*`` and their fake kernels.

The schemas live in C++ (csrc/registration.cpp); the real kernels in
csrc/<op>/; the inference-only autograd guard (backward raises, naming the op)
in csrc/inference_only_autograd.cpp, in C++ because a Python autograd kernel
costs every call ~20 us. What is here is what the dispatcher needs from Python:
``register_fake``, output shape and dtype without running a kernel, so
``torch.compile(fullgraph=True)`` traces every op with no graph break. Outputs
are always contiguous, as the real kernels return them.
"""

from __future__ import annotations

from typing import Optional, Sequence

import torch

from torch_memopt import _C  # noqa: F401  (loads the native ops into torch.ops.memopt)

OPS = ("gemm", "linear", "layer_norm", "rms_norm", "softmax", "add_layer_norm", "add_rms_norm")

# Each op's one overload, looked up once. Called through the packet
# (``torch.ops.memopt.softmax(...)``), every call matched its arguments against the
# overloads first: 0.25-0.3 us of a 1.8-2.2 us call (CI host, a 1 x 8 CPU tensor,
# benchmarks/tune/host_python.py). The wrappers below also leave out a keyword left at its
# default: each costs the argument parsing ~0.3-0.4 us. Together softmax's call went
# from 2.13 to 1.48 us there, torch.softmax's being 0.76.
_GEMM = torch.ops.memopt.gemm.default
_LINEAR = torch.ops.memopt.linear.default
_LAYER_NORM = torch.ops.memopt.layer_norm.default
_RMS_NORM = torch.ops.memopt.rms_norm.default
_SOFTMAX = torch.ops.memopt.softmax.default
_ADD_LAYER_NORM = torch.ops.memopt.add_layer_norm.default
_ADD_RMS_NORM = torch.ops.memopt.add_rms_norm.default


def built_with_cuda() -> bool:
    """Whether this build compiled the CUDA kernels (decided by nvcc at build time)."""
    return _C.built_with_cuda()


def variants(op: str, device: Optional[torch.device | str] = None) -> list[str]:
    """The variant names ``op`` accepts on ``device`` in this build, ``"auto"`` first.

    ``device`` defaults to the current CUDA device when a GPU is present, else
    the CPU. Variants compiled only for another architecture (the Hopper-only
    rungs on a non-Hopper GPU) are left out. An empty list means this build or
    machine cannot run ``op`` on that device type at all (a CUDA device asked
    for on a machine with no GPU, or a build without CUDA).
    """
    if op not in OPS:
        raise ValueError(f"torch_memopt.variants: unknown op {op!r}; ops: {', '.join(OPS)}")
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    device = torch.device(device)
    if device.type == "cpu":
        return _C.variants(op, "cpu", 0)
    if device.type != "cuda":
        raise ValueError(
            f"torch_memopt.variants: expected a cpu or cuda device, got {device.type!r}"
        )
    if not torch.cuda.is_available():
        return []
    major, minor = torch.cuda.get_device_capability(device)
    return _C.variants(op, "cuda", major * 10 + minor)


def gemm(a: torch.Tensor, b: torch.Tensor, *, variant: str = "auto") -> torch.Tensor:
    """Matrix product ``a @ b``, as ``torch.mm``.

    Args:
        a: [M, K], float32 / float16 / bfloat16, any strides.
        b: [K, N], the same dtype and device as ``a``.
        variant: a rung of the GEMM ladder (``torch_memopt.variants("gemm")``).

    Returns:
        [M, N] contiguous, ``a``'s dtype; accumulated in fp32.
    """
    if variant == "auto":
        return _GEMM(a, b)
    return _GEMM(a, b, variant=variant)


def linear(
    input: torch.Tensor,
    weight: torch.Tensor,
    bias: Optional[torch.Tensor] = None,
    *,
    activation: str = "none",
    variant: str = "auto",
) -> torch.Tensor:
    """``activation(F.linear(input, weight, bias))`` in one op.

    Args:
        input: [..., K] (at least 1-D).
        weight: [N, K], ``input``'s dtype and device.
        bias: [N] or None.
        activation: one of none, relu, gelu (exact erf), gelu_tanh, silu;
            applied in fp32 before the output is rounded to its dtype.
        variant: a rung (``torch_memopt.variants("linear")``).

    Returns:
        [..., N] contiguous, ``input``'s dtype.
    """
    if activation == "none" and variant == "auto":
        # The plain linear of every model layer (72 a BERT-base prefill, whose host time
        # sets its latency on the H200) parses no keyword (see at _GEMM).
        return _LINEAR(input, weight, bias)
    return _LINEAR(input, weight, bias, activation=activation, variant=variant)


def layer_norm(
    input: torch.Tensor,
    normalized_shape: Sequence[int],
    weight: Optional[torch.Tensor] = None,
    bias: Optional[torch.Tensor] = None,
    eps: float = 1e-5,
    *,
    variant: str = "auto",
) -> torch.Tensor:
    """``F.layer_norm``: ``(x - mean) / sqrt(var + eps) * weight + bias`` over the
    trailing ``normalized_shape`` dims (biased variance, eps inside the root).

    Args:
        input: [*, *normalized_shape].
        normalized_shape: the trailing dims to normalize over (at least one).
        weight, bias: ``normalized_shape``-shaped, ``input``'s dtype or float32.
        eps: added to the variance.

    Returns:
        ``input``'s shape, contiguous, ``input``'s dtype; statistics in fp32.
    """
    if variant == "auto":
        return _LAYER_NORM(input, list(normalized_shape), weight, bias, eps)
    return _LAYER_NORM(input, list(normalized_shape), weight, bias, eps, variant=variant)


def rms_norm(
    input: torch.Tensor,
    normalized_shape: Sequence[int],
    weight: Optional[torch.Tensor] = None,
    eps: Optional[float] = None,
    *,
    variant: str = "auto",
) -> torch.Tensor:
    """``F.rms_norm``: ``x / sqrt(mean(x^2) + eps) * weight`` over the trailing
    ``normalized_shape`` dims.

    Args:
        input: [*, *normalized_shape].
        normalized_shape: the trailing dims to normalize over (at least one).
        weight: ``normalized_shape``-shaped, ``input``'s dtype or float32.
        eps: added to the mean square; None means ``torch.finfo(torch.float32).eps``,
            what ``F.rms_norm`` uses for float32, float16 and bfloat16 inputs.

    Returns:
        ``input``'s shape, contiguous, ``input``'s dtype; statistics in fp32.
    """
    if variant == "auto":
        return _RMS_NORM(input, list(normalized_shape), weight, eps)
    return _RMS_NORM(input, list(normalized_shape), weight, eps, variant=variant)


def add_layer_norm(
    input: torch.Tensor,
    residual: torch.Tensor,
    normalized_shape: Sequence[int],
    weight: Optional[torch.Tensor] = None,
    bias: Optional[torch.Tensor] = None,
    eps: float = 1e-5,
    *,
    variant: str = "auto",
) -> tuple[torch.Tensor, torch.Tensor]:
    """The residual add of a transformer block and the LayerNorm after it, in one pass:
    ``s = input + residual`` and ``F.layer_norm(s, normalized_shape, weight, bias, eps)``.

    Args:
        input, residual: the same shape [*, *normalized_shape], dtype and device.
        normalized_shape, weight, bias, eps: as ``layer_norm``.

    Returns:
        ``(normalized, s)``: both ``input``'s shape, contiguous, ``input``'s dtype. ``s``
        is rounded to the dtype as ``input + residual`` is, and ``normalized`` is the
        norm of that rounded sum (what the two stock calls give).
    """
    shape = list(normalized_shape)
    if variant == "auto":
        return _ADD_LAYER_NORM(input, residual, shape, weight, bias, eps)
    return _ADD_LAYER_NORM(input, residual, shape, weight, bias, eps, variant=variant)


def add_rms_norm(
    input: torch.Tensor,
    residual: torch.Tensor,
    normalized_shape: Sequence[int],
    weight: Optional[torch.Tensor] = None,
    eps: Optional[float] = None,
    *,
    variant: str = "auto",
) -> tuple[torch.Tensor, torch.Tensor]:
    """``s = input + residual`` and ``F.rms_norm(s, normalized_shape, weight, eps)`` in
    one pass; returns ``(normalized, s)`` as ``add_layer_norm`` does. ``eps`` None is
    ``torch.finfo(torch.float32).eps``, as for ``rms_norm``."""
    shape = list(normalized_shape)
    if variant == "auto":
        return _ADD_RMS_NORM(input, residual, shape, weight, eps)
    return _ADD_RMS_NORM(input, residual, shape, weight, eps, variant=variant)


def softmax(
    input: torch.Tensor,
    dim: int = -1,
    dtype: Optional[torch.dtype] = None,
    *,
    variant: str = "auto",
) -> torch.Tensor:
    """``torch.softmax(input, dim, dtype)``.

    Args:
        input: any shape (0-D included).
        dim: the dim to normalize over, negative counts from the end.
        dtype: the output dtype; as in torch, the input is cast to it first
            (float16/bfloat16 to float32 is read directly, with no copy).

    Returns:
        ``input``'s shape, contiguous, ``dtype`` or ``input``'s dtype; fp32 math.
    """
    if variant == "auto":
        return _SOFTMAX(input, dim, dtype)
    return _SOFTMAX(input, dim, dtype, variant=variant)


# Fake kernels: shapes and dtypes only. The real kernels check their inputs;
# these check what they must to compute a shape.


@torch.library.register_fake("memopt::gemm")
def _gemm_fake(a, b, *, variant="auto"):
    torch._check(a.dim() == 2 and b.dim() == 2, lambda: "memopt::gemm: expected 2-D a and b")
    torch._check(a.shape[1] == b.shape[0], lambda: "memopt::gemm: a.size(1) != b.size(0)")
    return a.new_empty((a.shape[0], b.shape[1]))


@torch.library.register_fake("memopt::linear")
def _linear_fake(input, weight, bias=None, *, activation="none", variant="auto"):
    torch._check(weight.dim() == 2, lambda: "memopt::linear: expected a 2-D weight")
    torch._check(
        input.shape[-1] == weight.shape[1],
        lambda: "memopt::linear: input.size(-1) != weight.size(1)",
    )
    return input.new_empty((*input.shape[:-1], weight.shape[0]))


@torch.library.register_fake("memopt::layer_norm")
def _layer_norm_fake(input, normalized_shape, weight=None, bias=None, eps=1e-5, *, variant="auto"):
    return input.new_empty(input.shape)


@torch.library.register_fake("memopt::rms_norm")
def _rms_norm_fake(input, normalized_shape, weight=None, eps=None, *, variant="auto"):
    return input.new_empty(input.shape)


@torch.library.register_fake("memopt::softmax")
def _softmax_fake(input, dim=-1, dtype=None, *, variant="auto"):
    return input.new_empty(input.shape, dtype=dtype if dtype is not None else input.dtype)


@torch.library.register_fake("memopt::add_layer_norm")
def _add_layer_norm_fake(input, residual, normalized_shape, weight=None, bias=None, eps=1e-5, *,
                         variant="auto"):
    return input.new_empty(input.shape), input.new_empty(input.shape)


@torch.library.register_fake("memopt::add_rms_norm")
def _add_rms_norm_fake(input, residual, normalized_shape, weight=None, eps=None, *, variant="auto"):
    return input.new_empty(input.shape), input.new_empty(input.shape)
