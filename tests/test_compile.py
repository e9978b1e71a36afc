"""torch.compile(fullgraph=True) traces every op with no graph break (the fake
kernels give shapes), and the compiled result equals the eager one."""

import pytest
import torch

import torch_memopt
from samples import sample_inputs

OPS = ["gemm", "linear", "layer_norm", "rms_norm", "softmax"]


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("op", OPS)
def test_compiles_fullgraph(op, device, dynamic):
    torch._dynamo.reset()
    fn = getattr(torch_memopt, op)
    case = sample_inputs(op, device, torch.float32)[2]
    compiled = torch.compile(fn, fullgraph=True, dynamic=dynamic)
    torch.testing.assert_close(compiled(*case.args, **case.kwargs), fn(*case.args, **case.kwargs))


def test_compiled_block_of_ops_has_no_graph_break(device):
    """A small inference block calling all five ops compiles as one graph."""
    torch._dynamo.reset()
    x = torch.randn(4, 16, 32, device=device)
    w1, w2 = torch.randn(64, 32, device=device), torch.randn(32, 64, device=device)
    g = torch.randn(32, device=device)

    def block(x):
        h = torch_memopt.rms_norm(x, [32], g)
        h = torch_memopt.linear(h, w1, activation="silu")
        h = torch_memopt.softmax(h, -1)
        h = torch_memopt.linear(h, w2)
        h = torch_memopt.layer_norm(h + x, [32])
        return torch_memopt.gemm(h.reshape(-1, 32), w2)

    counter = torch._dynamo.testing.CompileCounter()
    compiled = torch.compile(block, backend=counter, fullgraph=True)
    torch.testing.assert_close(compiled(x), block(x))
    assert counter.frame_count == 1
