"""One sample-input factory per op, shared by the correctness, opcheck and
compile tests. Every case draws fresh random data (never zeros); the shapes are
chosen to break kernels: size 1, odd sizes (7, 127, 4097) that fill no tile or
warp evenly, empty tensors, and non-contiguous (transposed, sliced) inputs.

A case is (description, args, kwargs, reference) where reference(*args, **kwargs)
computes the expected output from the stock op in float64.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import torch
import torch.nn.functional as F
from torch_memopt.testing.references import ACTIVATIONS


@dataclass
class Case:
    name: str
    args: tuple
    kwargs: dict = field(default_factory=dict)
    reference: Callable | None = None

    def expected(self) -> torch.Tensor:
        return self.reference(*self.args, **self.kwargs)


def _f64(t):
    return None if t is None else t.double()


def _randn(*shape, device, dtype):
    return torch.randn(shape, device=device, dtype=torch.float32).to(dtype)


def _gemm_reference(a, b, **_):
    return torch.mm(a.double(), b.double())


_ACTIVATIONS = ACTIVATIONS  # the fuzzer's, torch_memopt.testing.references


def _linear_reference(input, weight, bias=None, *, activation="none", **_):
    return _ACTIVATIONS[activation](F.linear(input.double(), weight.double(), _f64(bias)))


def _layer_norm_reference(input, normalized_shape, weight=None, bias=None, eps=1e-5, **_):
    return F.layer_norm(input.double(), normalized_shape, _f64(weight), _f64(bias), eps)


def _rms_norm_reference(input, normalized_shape, weight=None, eps=None, **_):
    eps = torch.finfo(torch.float32).eps if eps is None else eps
    return F.rms_norm(input.double(), normalized_shape, _f64(weight), eps)


def _softmax_reference(input, dim=-1, dtype=None, **_):
    # torch.softmax(x, dtype=d) is softmax(x.to(d)): round to d first, then exact math.
    x = input if dtype is None else input.to(dtype)
    return torch.softmax(x.double(), dim)


def gemm_cases(device, dtype):
    r = lambda *s: _randn(*s, device=device, dtype=dtype)
    cases = [
        Case("1x1x1", (r(1, 1), r(1, 1))),
        Case("7x13x5 odd", (r(7, 13), r(13, 5))),
        Case("127x65x33 odd, no tile divides", (r(127, 65), r(65, 33))),
        Case("1x4097x3 one row, long K", (r(1, 4097), r(4097, 3))),
        Case("64x64x64 tile-aligned", (r(64, 64), r(64, 64))),
        Case("a transposed (column-major)", (r(19, 33).t(), r(19, 7))),
        Case("b sliced, row stride 2N", (r(9, 21), r(21, 22)[:, ::2])),
        Case("M = 0", (r(0, 5), r(5, 3))),
        Case("K = 0 gives zeros", (r(4, 0), r(0, 3))),
    ]
    for c in cases:
        c.reference = _gemm_reference
    return cases


def linear_cases(device, dtype):
    r = lambda *s: _randn(*s, device=device, dtype=dtype)
    cases = [
        Case("1-D input", (r(13), r(5, 13), r(5))),
        Case("3-D input, no bias", (r(2, 3, 17), r(9, 17), None)),
        Case("127x65 -> 33 with bias", (r(127, 65), r(33, 65), r(33))),
        Case("transposed weight", (r(6, 31), r(31, 12).t(), r(12))),
        Case("non-contiguous input", (r(8, 40)[:, ::2], r(7, 20), r(7))),
        Case("empty batch", (r(0, 4, 9), r(3, 9), r(3))),
    ]
    for act in _ACTIVATIONS:
        if act != "none":
            cases.append(Case(f"activation {act}", (r(7, 33), r(11, 33), r(11)), {"activation": act}))
    for c in cases:
        c.reference = _linear_reference
    return cases


def _norm_shapes():
    # (input shape, normalized_shape, description)
    return [
        ((1, 1), [1], "one element"),
        ((7, 33), [33], "odd rows and width"),
        ((3, 127), [127], "127 wide"),
        ((2, 4097), [4097], "4097 wide"),
        ((2, 3, 5, 8), [5, 8], "two normalized dims"),
        ((0, 16), [16], "no rows"),
    ]


def layer_norm_cases(device, dtype):
    r = lambda *s: _randn(*s, device=device, dtype=dtype)
    cases = []
    for shape, norm, what in _norm_shapes():
        cases.append(Case(what, (r(*shape), norm, r(*norm), r(*norm))))
    cases += [
        Case("no weight, no bias", (r(5, 24), [24], None, None)),
        Case("weight only, eps=1e-3", (r(5, 24), [24], r(24), None, 1e-3)),
        Case("fp32 weight and bias", (r(6, 40), [40], torch.randn(40, device=device),
                                      torch.randn(40, device=device))),
        Case("transposed input", (r(48, 6).t(), [48], r(48), r(48))),
        Case("offset mean (|mean| >> std)", (r(4, 64) + 30, [64], r(64), r(64))),
    ]
    for c in cases:
        c.reference = _layer_norm_reference
    return cases


def rms_norm_cases(device, dtype):
    r = lambda *s: _randn(*s, device=device, dtype=dtype)
    cases = []
    for shape, norm, what in _norm_shapes():
        cases.append(Case(what, (r(*shape), norm, r(*norm))))
    cases += [
        Case("no weight", (r(5, 24), [24], None)),
        Case("eps=1e-2 explicit", (r(5, 24) * 0.05, [24], r(24), 1e-2)),
        Case("default eps on tiny inputs", (r(3, 16) * 1e-3, [16], r(16))),
        Case("fp32 weight", (r(6, 40), [40], torch.randn(40, device=device))),
        Case("sliced input", (r(9, 64)[::2], [64], r(64))),
    ]
    for c in cases:
        c.reference = _rms_norm_reference
    return cases


def softmax_cases(device, dtype):
    r = lambda *s: _randn(*s, device=device, dtype=dtype)
    cases = [
        Case("0-D", (r(),)),
        Case("one element", (r(1),)),
        Case("7 wide", (r(3, 7),)),
        Case("127 wide", (r(5, 127), -1)),
        Case("4097 wide", (r(2, 4097), 1)),
        Case("middle dim", (r(4, 9, 5), 1)),
        Case("first dim", (r(6, 3, 2), 0)),
        Case("transposed input", (r(33, 7).t(), -1)),
        Case("large logits", (r(4, 50) * 40, -1)),
        Case("empty", (r(0, 5), -1)),
        Case("dtype=float32", (r(3, 65), -1, torch.float32)),
        Case("dtype=float16", (r(3, 65), -1, torch.float16)),
    ]
    for c in cases:
        c.reference = _softmax_reference
    return cases


CASES = {
    "gemm": gemm_cases,
    "linear": linear_cases,
    "layer_norm": layer_norm_cases,
    "rms_norm": rms_norm_cases,
    "softmax": softmax_cases,
}


def sample_inputs(op, device, dtype):
    """The cases of `op` on `device` in `dtype`."""
    return CASES[op](device, dtype)
