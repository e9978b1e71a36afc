"""What each benchmarked op runs: its inputs, our call and the stock peer.

Both calls take the very same positional arguments, so one input set feeds ours and
stock alike. Inputs are fresh ``torch.randn`` draws, never zeros or ones: a kernel
may take a shortcut on special values, and real activations are neither. Matrices
that are contracted over K are scaled by 1/sqrt(K) so that fp16 outputs stay far from
overflow at every bench shape. Norm weights and biases are in the input dtype, as
after ``module.half()``; the byte formulas in :mod:`.shapes` assume so.
"""
from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass
from typing import Callable, Iterator

import torch
import torch.nn.functional as F

import torch_memopt


@dataclass(frozen=True)
class OpCase:
    """The stock peer of one op (and its name for the tables) and its input factory."""

    stock_name: str
    stock: Callable[..., torch.Tensor]
    make_inputs: Callable[[dict, torch.dtype, torch.device], tuple]


def _randn(*size: int, dtype: torch.dtype, device: torch.device, scale: float = 1.0) -> torch.Tensor:
    values = torch.randn(*size, device=device, dtype=dtype)
    return values.mul_(scale) if scale != 1.0 else values


def _gemm_inputs(shape, dtype, device):
    m, n, k = shape["M"], shape["N"], shape["K"]
    a = _randn(m, k, dtype=dtype, device=device)  # [M, K]
    b = _randn(k, n, dtype=dtype, device=device, scale=k ** -0.5)  # [K, N]
    return a, b


def _linear_inputs(shape, dtype, device):
    m, n, k = shape["M"], shape["N"], shape["K"]
    x = _randn(m, k, dtype=dtype, device=device)  # [M, K]
    weight = _randn(n, k, dtype=dtype, device=device, scale=k ** -0.5)  # [N, K]
    bias = _randn(n, dtype=dtype, device=device)  # [N]
    return x, weight, bias


def _layer_norm_inputs(shape, dtype, device):
    rows, n = shape["rows"], shape["N"]
    x = _randn(rows, n, dtype=dtype, device=device)
    return x, (n,), _randn(n, dtype=dtype, device=device), _randn(n, dtype=dtype, device=device)


def _rms_norm_inputs(shape, dtype, device):
    rows, n = shape["rows"], shape["N"]
    return _randn(rows, n, dtype=dtype, device=device), (n,), _randn(n, dtype=dtype, device=device)


def _softmax_inputs(shape, dtype, device):
    return _randn(shape["rows"], shape["N"], dtype=dtype, device=device), -1


CASES: dict[str, OpCase] = {
    "gemm": OpCase("torch.mm", torch.mm, _gemm_inputs),
    "linear": OpCase("F.linear", F.linear, _linear_inputs),
    "layer_norm": OpCase("F.layer_norm", F.layer_norm, _layer_norm_inputs),
    "rms_norm": OpCase("F.rms_norm", F.rms_norm, _rms_norm_inputs),
    "softmax": OpCase("torch.softmax", torch.softmax, _softmax_inputs),
}


def ours(op: str, variant: str) -> Callable[..., torch.Tensor]:
    """Our op through its public wrapper, pinned to one variant."""
    return functools.partial(getattr(torch_memopt, op), variant=variant)


def input_bytes(args: tuple) -> int:
    """Bytes of the tensors in one input set: what a rotation must push out of L2."""
    return sum(arg.nbytes for arg in args if isinstance(arg, torch.Tensor))


@contextlib.contextmanager
def fp32_matmul_without_tf32() -> Iterator[None]:
    """Keep cuBLAS on true fp32 while timing, then restore the caller's setting.

    With TF32 on, torch.mm in fp32 runs on tensor cores with a 10-bit mantissa: a
    different, less accurate computation than our fp32 kernels, and no peer for them.
    """
    saved = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved
