"""optimize_'s activation fusion (torch_memopt/fuse.py): a parent computing ``act(linear(x))``,
``fc2(act(fc1(x)))`` or ``down(act(gate(x)) * up(x))`` becomes one memopt::linear with the
activation as its epilogue (then the rest), judged by its output on random input, never by
its class. CPU reference kernels (``use_cpu_kernels``); the real models (BERT, GPT-2, Llama,
ViT) are covered by test_real_models.py, whose MLPs all fuse."""
import copy

import pytest
import torch
from torch import nn

import torch_memopt
from memopt_calls import count_memopt_calls
from torch_memopt import fuse


class Intermediate(nn.Module):  # Hugging Face's BertIntermediate
    def __init__(self, act=None):
        super().__init__()
        self.dense, self.act = nn.Linear(16, 48), act or nn.GELU()

    def forward(self, x):
        return self.act(self.dense(x))


class MLP(nn.Module):  # timm's Mlp, GPT-2's MLP
    def __init__(self, p=0.0):
        super().__init__()
        self.fc1, self.act, self.drop, self.fc2 = nn.Linear(16, 48), nn.GELU("tanh"), \
            nn.Dropout(p), nn.Linear(48, 16)

    def forward(self, x):
        return self.drop(self.fc2(self.drop(self.act(self.fc1(x)))))


class Gated(nn.Module):  # Llama's MLP
    def __init__(self):
        super().__init__()
        self.gate_proj, self.up_proj = nn.Linear(16, 48, bias=False), nn.Linear(16, 48, bias=False)
        self.down_proj, self.act_fn = nn.Linear(48, 16, bias=False), nn.SiLU()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class Shifted(Intermediate):  # the same children, another computation: not fused
    def forward(self, x):
        return self.act(self.dense(x)) + 1


class Model(nn.Module):
    def __init__(self, p=0.0):
        super().__init__()
        self.inter, self.mlp, self.gated, self.shifted = Intermediate(), MLP(p), Gated(), Shifted()

    def forward(self, x):
        return self.mlp(x) + self.gated(x) + self.inter(x)[..., :16] + self.shifted(x)[..., :16]


@pytest.mark.parametrize("module, name", [
    (nn.ReLU(), "relu"), (nn.GELU(), "gelu"), (nn.GELU(approximate="tanh"), "gelu_tanh"),
    (nn.SiLU(), "silu"), (nn.Tanh(), None), (nn.Identity(), None), (nn.Dropout(0.0), None),
    (nn.PReLU(), None), (nn.Linear(4, 4), None)])
def test_activations_are_recognized_by_what_they_compute(module, name):
    assert fuse.activation_of(module) == name


def test_the_three_shapes_fuse_and_keep_the_outputs_and_keys():
    torch.manual_seed(0)
    model = Model().eval()
    stock = copy.deepcopy(model)
    torch_memopt.optimize_(model)
    fused = {e.name: e.replacement for e in torch_memopt.last_report().replaced
             if "Act(" in e.replacement}
    assert fused == {"inter": "LinearAct(gelu)", "mlp": "MLPAct(gelu_tanh)",
                     "gated": "GatedMLPAct(silu)"}, fused
    assert type(model.shifted) is Shifted
    assert list(model.state_dict()) == list(stock.state_dict())
    x = torch.randn(2, 7, 16)
    with torch.inference_mode(), torch_memopt.use_cpu_kernels():
        ref = stock(x).double()
        with count_memopt_calls() as calls:
            got = model(x)
    # inter 1, mlp 2, gated 3, shifted's dense 1: seven linears, no activation op of their own
    assert calls["linear"] == 7, dict(calls)
    torch.testing.assert_close(got.double(), ref, rtol=1e-5, atol=1e-5)


def test_the_fused_module_runs_the_original_where_memopt_does_not():
    torch.manual_seed(0)
    model = Model(p=0.5)
    stock = copy.deepcopy(model)
    torch_memopt.optimize_(model)
    assert isinstance(model.mlp, fuse.MLPAct)
    model.eval()
    assert not model.mlp.original.training and not model.mlp.drop.training
    model.train()
    assert model.mlp.original.training and model.mlp.drop.training
    x = torch.randn(4, 16)
    with torch_memopt.use_cpu_kernels(), torch.no_grad():
        # training mode: the parent's own forward, its dropouts acting (same random stream);
        # its children are memopt's Linears, each one call, with no epilogue
        torch.manual_seed(1)
        ref = stock.mlp(x)
        torch.manual_seed(1)
        with count_memopt_calls() as calls:
            got = model.mlp(x)
        assert calls["linear"] == 2, dict(calls)
        torch.testing.assert_close(got, ref, rtol=1e-5, atol=1e-5)
        assert (got == 0).sum() > 0  # the dropout acted
    with torch_memopt.use_cpu_kernels():
        # a call that needs a gradient: the stock path, gradients flow
        model.eval(), stock.eval()
        xg = x.clone().requires_grad_()
        model.inter(xg).sum().backward()
        assert xg.grad is not None and model.inter.dense.weight.grad is not None


def test_optimize_without_activations_and_twice():
    model = Model().eval()
    torch_memopt.optimize_(model, activations=False)
    assert not any("Act(" in e.replacement for e in torch_memopt.last_report().replaced)
    torch_memopt.optimize_(model)
    assert isinstance(model.inter, fuse.LinearAct)
    torch_memopt.optimize_(model)  # nothing left to fuse: a fused module is not fused again
    assert not any("Act(" in e.replacement for e in torch_memopt.last_report().replaced)
    assert isinstance(model.inter, fuse.LinearAct) and type(model.inter.dense) is not fuse.LinearAct


def test_a_linear_with_hooks_runs_through_its_own_forward():
    """A fused call would skip the linear's hooks (tensor parallelism puts its input and
    output conversions there): with one registered, the parent runs as it is."""
    model = Model().eval()
    torch_memopt.optimize_(model)
    seen = []
    model.inter.dense.register_forward_hook(lambda module, args, out: seen.append(out.shape))
    with torch.inference_mode(), torch_memopt.use_cpu_kernels():
        model.inter(torch.randn(3, 16))
    assert seen == [torch.Size([3, 48])]
