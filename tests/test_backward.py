"""Inference only: backward through any memopt op raises an error naming it."""

import pytest
import torch

import torch_memopt
from samples import sample_inputs

OPS = ["gemm", "linear", "layer_norm", "rms_norm", "softmax"]


@pytest.mark.parametrize("op", OPS)
def test_backward_raises_naming_the_op(op, device):
    case = sample_inputs(op, device, torch.float32)[2]
    args = [a.detach().requires_grad_() if isinstance(a, torch.Tensor) else a for a in case.args]
    out = getattr(torch_memopt, op)(*args, **case.kwargs)
    assert out.requires_grad
    with pytest.raises(RuntimeError, match=rf"memopt::{op} is inference-only and has no backward"):
        out.sum().backward()


def test_forward_under_no_grad_needs_no_backward(device):
    a = torch.randn(5, 4, device=device, requires_grad=True)
    with torch.no_grad():
        out = torch_memopt.gemm(a, torch.randn(4, 3, device=device))
    assert not out.requires_grad
