"""optimize_'s residual pass (torch_memopt/fuse_add_norm.py): a parent computing
``norm(linear(h) + residual)`` (BERT's output blocks) becomes memopt::linear then one fused
add + norm, judged by its output on random input. CPU reference kernels
(``use_cpu_kernels``) against float64; BERT itself in test_real_models.py and below."""
import copy

import pytest
import torch
from torch import nn

import torch_memopt
from memopt_calls import count_memopt_calls
from torch_memopt import fuse_add_norm


class Output(nn.Module):  # Hugging Face's BertSelfOutput / BertOutput
    def __init__(self, norm=None, width=24, features=16):
        super().__init__()
        self.dense = nn.Linear(width, features)
        self.LayerNorm = norm if norm is not None else nn.LayerNorm(features, eps=1e-12)
        self.dropout = nn.Dropout(0.1)

    def forward(self, hidden, residual):
        return self.LayerNorm(self.dropout(self.dense(hidden)) + residual)


class NormThenAdd(Output):  # the same children, another computation: not fused
    def forward(self, hidden, residual):
        return self.LayerNorm(self.dense(hidden)) + residual


def _randomize(module):
    with torch.no_grad():  # norms start at weight 1, bias 0: a test would not see them
        for p in module.parameters():
            p.copy_(torch.randn_like(p))
    return module


def _float64_reference(module: Output, hidden, residual):
    ref = copy.deepcopy(module).double().eval()
    return ref(hidden.double(), residual.double())


@pytest.mark.parametrize("norm, op", [
    (lambda: nn.LayerNorm(16, eps=1e-12), "add_layer_norm"),
    (lambda: nn.LayerNorm(16, elementwise_affine=False), "add_layer_norm"),
    (lambda: nn.LayerNorm(16, bias=False), "add_layer_norm"),
    (lambda: nn.RMSNorm(16, eps=1e-6), "add_rms_norm"),
    (lambda: nn.RMSNorm(16), "add_rms_norm")])
def test_the_output_block_fuses_and_keeps_its_outputs_and_keys(norm, op):
    torch.manual_seed(0)
    model = nn.Sequential()
    model.add_module("block", _randomize(Output(norm())))
    model.eval()
    keys = list(model.state_dict())
    torch_memopt.optimize_(model)
    assert isinstance(model.block, fuse_add_norm.LinearAddNorm), type(model.block)
    entry, = [e for e in torch_memopt.last_report().replaced if e.name == "block"]
    assert entry.replacement == f"LinearAddNorm({op})"
    assert list(model.state_dict()) == keys
    hidden, residual = torch.randn(2, 7, 24), torch.randn(2, 7, 16)
    out = torch.full((2, 7, 16), float("nan"))  # poisoned: every element must be written
    with torch.inference_mode(), torch_memopt.use_cpu_kernels():
        with count_memopt_calls() as calls:
            out.copy_(model.block(hidden, residual))
    assert calls == {"linear": 1, op: 1}, dict(calls)
    torch.testing.assert_close(out.double(), _float64_reference(model.block.original, hidden,
                                                                 residual), rtol=1e-4, atol=1e-4)


def test_a_parent_computing_something_else_stays():
    model = nn.Sequential()
    model.add_module("block", NormThenAdd())
    torch_memopt.optimize_(model.eval())
    assert type(model.block) is NormThenAdd
    assert fuse_add_norm.fused_add_norm_for(Output(nn.GroupNorm(4, 16))) is None


def test_the_switches_keep_the_parent():
    for kwargs in ({"add_norms": False}, {"layer_norm": False}, {"linear": False}):
        model = nn.Sequential()
        model.add_module("block", Output())
        torch_memopt.optimize_(model.eval(), **kwargs)
        assert type(model.block) is Output, kwargs
    model = nn.Sequential()
    model.add_module("block", Output(nn.RMSNorm(16)))
    torch_memopt.optimize_(model.eval(), rms_norm=False)
    assert type(model.block) is Output


def _fused_block():
    torch.manual_seed(0)
    model = nn.Sequential()
    model.add_module("block", _randomize(Output()))
    stock = copy.deepcopy(model.block)
    torch_memopt.optimize_(model.eval())
    assert isinstance(model.block, fuse_add_norm.LinearAddNorm)
    return model.block, stock.eval()


@pytest.mark.parametrize("case", ["broadcast residual", "float16 residual", "training",
                                  "needs grad"])
def test_calls_memopt_does_not_take_give_the_stock_result(case):
    block, stock = _fused_block()
    hidden = torch.randn(3, 5, 24)
    residual = torch.randn(3, 5, 16)
    if case == "broadcast residual":
        residual = torch.randn(16)
    elif case == "float16 residual":
        residual = residual.half()  # promotes the sum to float32: stock rules
    elif case == "training":
        block.train(), stock.train()
    elif case == "needs grad":
        hidden.requires_grad_()
    with torch_memopt.use_cpu_kernels(), torch.set_grad_enabled(case == "needs grad"):
        torch.manual_seed(1)
        ref = stock(hidden, residual)
        torch.manual_seed(1)
        with count_memopt_calls() as calls:
            got = block(hidden, residual)
    assert "add_layer_norm" not in calls, dict(calls)
    torch.testing.assert_close(got, ref, rtol=1e-5, atol=1e-5)
    if case == "needs grad":
        got.sum().backward()
        assert hidden.grad is not None and block.dense.weight.grad is not None


def test_a_norm_with_hooks_runs_through_the_parent():
    block, _ = _fused_block()
    seen = []
    block.LayerNorm.register_forward_hook(lambda module, args, out: seen.append(out.shape))
    with torch.inference_mode(), torch_memopt.use_cpu_kernels():
        block(torch.randn(3, 24), torch.randn(3, 16))
    assert seen == [torch.Size([3, 16])]


def test_bert_fuses_both_output_blocks_of_every_layer():
    pytest.importorskip("transformers", reason="BERT comes from transformers")
    from torch_memopt.bench.model_zoo import bert

    real = bert(True, "cpu", torch.float32)
    torch_memopt.optimize_(real.model)
    fused = [e.name for e in torch_memopt.last_report().replaced
             if e.replacement == "LinearAddNorm(add_layer_norm)"]
    layers = real.model.config.num_hidden_layers
    assert len(fused) == 2 * layers, fused
    inputs = real.make_input(2, 16)
    with torch.inference_mode(), torch_memopt.use_cpu_kernels(), count_memopt_calls() as calls:
        real.model(**inputs)
    assert calls["add_layer_norm"] == 2 * layers, dict(calls)


def test_compile_fullgraph_traces_the_fused_block():
    block, stock = _fused_block()
    torch._dynamo.reset()
    compiled = torch.compile(block, fullgraph=True)
    hidden, residual = torch.randn(2, 5, 24), torch.randn(2, 5, 16)
    with torch.no_grad(), torch_memopt.use_cpu_kernels():
        got = compiled(hidden, residual)
        ref = stock(hidden, residual)
    torch.testing.assert_close(got, ref, rtol=1e-4, atol=1e-4)


def test_a_call_with_keywords_runs_the_parent():
    """The fused module takes the parent's positional form only; keywords (or a parent's
    optional arguments) go to the parent's own forward, with the same result."""
    block, stock = _fused_block()
    hidden, residual = torch.randn(3, 24), torch.randn(3, 16)
    with torch.inference_mode(), torch_memopt.use_cpu_kernels():
        with count_memopt_calls() as calls:
            got = block(hidden, residual=residual)
        ref = stock(hidden, residual)
    assert calls == {"linear": 1, "layer_norm": 1}, dict(calls)
    torch.testing.assert_close(got, ref, rtol=1e-5, atol=1e-5)
