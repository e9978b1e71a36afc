"""torch_memopt.nn: the drop-in modules keep their torch twin's constructor, parameters
and state_dict keys, give its outputs, run the memopt op when it can take the call
(counted here), and the stock op when a gradient is needed or the case is not memopt's.

CPU: inside ``use_cpu_kernels()`` (memopt's CPU reference kernels); CUDA where present.
"""

import pytest
import torch
from torch import nn

import torch_memopt
from conftest import requires_cuda
from memopt_calls import count_memopt_calls

DEVICES = ["cpu", pytest.param("cuda", marks=[requires_cuda, pytest.mark.cuda])]
TOLERANCE = {torch.float32: 1e-5, torch.bfloat16: 2e-2}


def twins(device, dtype):
    """(torch module, memopt module, input) per module kind, same constructor arguments."""
    kw = {"device": device, "dtype": dtype}
    x = torch.randn(3, 5, 64, device=device, dtype=dtype)
    return [
        (nn.Linear(64, 48, **kw), torch_memopt.nn.Linear(64, 48, **kw), x, "linear"),
        (nn.Linear(64, 48, bias=False, **kw), torch_memopt.nn.Linear(64, 48, bias=False, **kw), x,
         "linear"),
        (nn.LayerNorm(64, **kw), torch_memopt.nn.LayerNorm(64, **kw), x, "layer_norm"),
        (nn.LayerNorm(64, bias=False, **kw), torch_memopt.nn.LayerNorm(64, bias=False, **kw), x,
         "layer_norm"),
        (nn.RMSNorm(64, eps=1e-6, **kw), torch_memopt.nn.RMSNorm(64, eps=1e-6, **kw), x, "rms_norm"),
        (nn.Softmax(dim=-1), torch_memopt.nn.Softmax(dim=-1), x, "softmax"),
        (nn.Softmax(dim=1), torch_memopt.nn.Softmax(dim=1), x, "softmax"),
    ]


def randomize(module):
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn_like(p))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["float32", "bfloat16"])
def test_same_state_dict_same_outputs_through_memopt(device, dtype):
    for stock, ours, x, op in twins(device, dtype):
        randomize(stock)
        assert list(ours.state_dict()) == list(stock.state_dict()), op
        ours.load_state_dict(stock.state_dict())
        with torch.inference_mode(), torch_memopt.use_cpu_kernels(), count_memopt_calls() as calls:
            got = ours(x)
        ref = stock(x)
        assert calls[op] == 1, f"{op}: memopt was not called ({dict(calls)})"
        assert got.dtype == ref.dtype and got.shape == ref.shape
        torch.testing.assert_close(got.float(), ref.float(), rtol=TOLERANCE[dtype],
                                   atol=TOLERANCE[dtype])


def test_grad_needed_runs_the_stock_op_and_trains():
    layer = torch_memopt.nn.Linear(16, 8)
    x = torch.randn(4, 16)
    with torch_memopt.use_cpu_kernels(), count_memopt_calls() as calls:
        out = layer(x)  # parameters require grad, grad mode on
    assert sum(calls.values()) == 0
    out.sum().backward()
    assert layer.weight.grad is not None and layer.weight.grad.abs().sum() > 0


def test_cases_memopt_does_not_take_run_the_stock_op():
    layer = torch_memopt.nn.LayerNorm(16, dtype=torch.float64)
    x = torch.randn(4, 16, dtype=torch.float64)
    with torch.no_grad(), torch_memopt.use_cpu_kernels(), count_memopt_calls() as calls:
        out = layer(x)
    assert sum(calls.values()) == 0 and out.dtype == torch.float64
    soft = torch_memopt.nn.Softmax()  # dim=None: torch's implicit dim, with its warning
    with torch.no_grad(), torch_memopt.use_cpu_kernels(), count_memopt_calls() as calls:
        with pytest.warns(UserWarning, match="Implicit dimension"):
            soft(torch.randn(2, 3))
    assert sum(calls.values()) == 0


def test_cpu_tensors_stay_on_the_stock_op_by_default():
    layer = torch_memopt.nn.Linear(16, 8)
    with torch.no_grad(), count_memopt_calls() as calls:
        layer(torch.randn(4, 16))
    assert sum(calls.values()) == 0


@pytest.mark.parametrize("cls", [nn.Linear, nn.LayerNorm, nn.RMSNorm, nn.Softmax])
def test_from_module_shares_parameters_and_shows_the_variant(cls):
    args = (16, 8) if cls is nn.Linear else ((16,) if cls is not nn.Softmax else (-1,))
    stock = cls(*args)
    ours = getattr(torch_memopt.nn, cls.__name__).from_module(stock, variant="auto")
    assert isinstance(ours, cls)
    for (name, p), (name2, q) in zip(stock.named_parameters(), ours.named_parameters()):
        assert name == name2 and p is q  # the same Parameter, no copy
    assert "variant='auto'" in repr(ours)
    assert repr(stock).split("(", 1)[1].rstrip(")") in repr(ours)  # the twin's own fields
    if cls is nn.Linear:
        with torch.no_grad():
            stock.weight.zero_()
        assert ours.weight.abs().sum() == 0  # one tensor


def test_hooks_on_the_original_stay_on():
    stock = nn.Linear(4, 4)
    seen = []
    stock.register_forward_hook(lambda m, i, o: seen.append(o.shape))
    ours = torch_memopt.nn.Linear.from_module(stock)
    ours(torch.randn(2, 4))
    assert seen == [torch.Size([2, 4])]
