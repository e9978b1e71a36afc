"""optimize_(model) and enable(): the same outputs as the stock model, memopt ops
actually called (counted), the report of what was replaced and skipped and why,
RMSNorm classes of other libraries recognized by what they compute, training left
possible, and torch.compile(fullgraph=True) over an optimized model.

CPU, inside ``use_cpu_kernels()``: the CI runs these.
"""

import copy

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import torch_memopt
from memopt_calls import count_memopt_calls


class LlamaStyleRMSNorm(nn.Module):
    """The shape and arithmetic of Hugging Face's LlamaRMSNorm (its code is not used)."""

    def __init__(self, n, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n))
        self.variance_epsilon = eps

    def forward(self, x):
        dtype = x.dtype
        x = x.to(torch.float32)
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.variance_epsilon)
        return self.weight * x.to(dtype)


class GemmaStyleRMSNorm(LlamaStyleRMSNorm):
    """Shaped like an RMSNorm, but scales by 1 + weight: must be left alone."""

    def forward(self, x):
        x32 = x.float()
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.variance_epsilon)
        return (x32 * (1.0 + self.weight.float())).to(x.dtype)


class LoRALinear(nn.Linear):
    """A Linear subclass with its own forward: swapping it would drop the extra term."""

    def forward(self, x):
        return super().forward(x) + 1.0


class Block(nn.Module):
    def __init__(self, n=32):
        super().__init__()
        self.norm1 = nn.LayerNorm(n)
        self.qkv = nn.Linear(n, 3 * n)
        self.attn_softmax = nn.Softmax(dim=-1)
        self.proj = nn.Linear(n, n, bias=False)
        self.norm2 = LlamaStyleRMSNorm(n)
        self.norm3 = nn.RMSNorm(n)
        self.gemma_norm = GemmaStyleRMSNorm(n)
        self.adapter = LoRALinear(n, n)

    def forward(self, x):
        h = self.norm1(x)
        q, k, v = self.qkv(h).chunk(3, dim=-1)
        a = self.attn_softmax(q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5) @ v
        x = x + self.proj(a)
        x = self.norm3(self.norm2(x))
        return self.adapter(self.gemma_norm(x))


def model_and_input():
    torch.manual_seed(0)
    model = nn.Sequential(Block(), Block()).eval()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.LayerNorm):  # not the all-ones default: a real test
                m.weight.copy_(torch.randn_like(m.weight))
                m.bias.copy_(torch.randn_like(m.bias))
    return model, torch.randn(2, 7, 32)


def test_optimize_swaps_in_place_same_outputs_and_reports():
    model, x = model_and_input()
    stock = copy.deepcopy(model)
    assert torch_memopt.optimize_(model) is model
    assert isinstance(model[0].qkv, torch_memopt.nn.Linear)
    assert isinstance(model[0].norm1, torch_memopt.nn.LayerNorm)
    assert isinstance(model[0].norm3, torch_memopt.nn.RMSNorm)
    assert isinstance(model[0].attn_softmax, torch_memopt.nn.Softmax)
    assert type(model[0].norm2).__name__ == "RMSNormOf"  # recognized by behaviour
    assert type(model[0].gemma_norm) is GemmaStyleRMSNorm
    assert type(model[0].adapter) is LoRALinear
    assert list(model.state_dict()) == list(stock.state_dict())  # same keys

    with torch.inference_mode(), torch_memopt.use_cpu_kernels(), count_memopt_calls() as calls:
        got = model(x)
    ref = stock(x)
    torch.testing.assert_close(got, ref, rtol=1e-4, atol=1e-4)
    assert calls == {"layer_norm": 2, "linear": 4, "softmax": 2, "rms_norm": 4}, dict(calls)

    report = torch_memopt.last_report()
    replaced = {e.name: e.replacement for e in report.replaced}
    skipped = {e.name: e.reason for e in report.skipped}
    assert replaced["0.qkv"] == "Linear" and replaced["1.norm2"] == "RMSNormOf"
    assert "computes something else" in skipped["0.gemma_norm"]
    assert "subclass of torch.nn.Linear whose forward differs" in skipped["0.adapter"]
    assert "0.qkv: Linear -> Linear" in str(report)


def test_optimize_flags_and_filter_fn():
    model, _ = model_and_input()
    torch_memopt.optimize_(model, softmax=False, filter_fn=lambda name, m: not name.startswith("1."))
    assert type(model[0].attn_softmax) is nn.Softmax
    assert type(model[1].qkv) is nn.Linear and isinstance(model[0].qkv, torch_memopt.nn.Linear)
    skipped = {e.name: e.reason for e in torch_memopt.last_report().skipped}
    assert skipped["0.attn_softmax"] == "softmax=False" and skipped["1.qkv"] == "filter_fn"


def test_optimize_twice_changes_nothing_more():
    model, x = model_and_input()
    torch_memopt.optimize_(model)
    first = [type(m) for m in model.modules()]
    torch_memopt.optimize_(model)
    assert [type(m) for m in model.modules()] == first
    assert not torch_memopt.last_report().replaced


def test_training_an_optimized_model_uses_the_stock_ops():
    model, x = model_and_input()
    torch_memopt.optimize_(model.train())
    with torch_memopt.use_cpu_kernels(), count_memopt_calls() as calls:
        model(x).sum().backward()
    assert sum(calls.values()) == 0
    assert model[0].qkv.weight.grad is not None


def test_compile_fullgraph_over_an_optimized_model():
    model, x = model_and_input()
    stock = copy.deepcopy(model)
    torch_memopt.optimize_(model)
    torch._dynamo.reset()
    compiled = torch.compile(model, fullgraph=True)
    with torch.no_grad(), torch_memopt.use_cpu_kernels():
        got = compiled(x)
    torch.testing.assert_close(got, stock(x), rtol=1e-4, atol=1e-4)


def test_enable_routes_the_functionals():
    torch.manual_seed(0)
    x, w, b = torch.randn(6, 32), torch.randn(16, 32), torch.randn(16)
    a, m = torch.randn(6, 32), torch.randn(32, 5)
    n = torch.randn(32)
    with torch_memopt.enable(), torch_memopt.use_cpu_kernels(), torch.no_grad(), \
            count_memopt_calls() as calls:
        results = [F.linear(x, w, b), torch.mm(a, m), torch.matmul(a, m), a @ m, a.mm(m),
                   F.layer_norm(x, [32], n, n), F.rms_norm(x, [32], n), torch.softmax(x, -1),
                   F.softmax(x, dim=0), x.softmax(-1), torch.softmax(x, 1, dtype=torch.float32)]
    assert calls == {"linear": 1, "gemm": 4, "layer_norm": 1, "rms_norm": 1, "softmax": 4}, dict(calls)
    refs = [F.linear(x, w, b), a @ m, a @ m, a @ m, a @ m, F.layer_norm(x, [32], n, n),
            F.rms_norm(x, [32], n), torch.softmax(x, -1), F.softmax(x, dim=0), x.softmax(-1),
            torch.softmax(x, 1)]
    for got, ref in zip(results, refs):
        torch.testing.assert_close(got, ref, rtol=1e-5, atol=1e-5)


def test_enable_leaves_what_memopt_does_not_take_to_the_stock_op():
    x64 = torch.randn(4, 8, dtype=torch.float64)
    batched = torch.randn(2, 4, 8)
    w = torch.randn(8, 8, requires_grad=True)
    with torch_memopt.enable(), torch_memopt.use_cpu_kernels(), count_memopt_calls() as calls:
        torch.softmax(x64, -1)                  # float64
        torch.softmax(x64.float(), -1, dtype=torch.float64)  # a float64 output
        torch.matmul(batched, torch.randn(8, 3))  # 3-D matmul
        F.linear(torch.randn(4, 8), w)          # a gradient is needed
        torch.mm(torch.randn(2, 2), torch.randn(2, 2), out=torch.empty(2, 2))
    assert sum(calls.values()) == 0, dict(calls)


class Conv1DStyle(nn.Module):
    """The shape and arithmetic of GPT-2's Conv1D: weight [in, out], x @ weight + bias."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_in, n_out))
        self.bias = nn.Parameter(torch.randn(n_out))

    def forward(self, x):
        return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight).view(
            *x.shape[:-1], -1)


def test_x_at_weight_plus_bias_modules_are_recognized():
    model = nn.Sequential(Conv1DStyle(32, 24)).eval()
    x = torch.randn(2, 5, 32)
    ref = model(x)
    torch_memopt.optimize_(model)
    assert type(model[0]).__name__ == "MatmulOf"
    assert list(model.state_dict()) == ["0.weight", "0.bias"]
    with torch.inference_mode(), torch_memopt.use_cpu_kernels(), count_memopt_calls() as calls:
        got = model(x)
    assert calls["linear"] == 1
    torch.testing.assert_close(got, ref, rtol=1e-4, atol=1e-4)


class SameLayerNorm(nn.LayerNorm):
    """A subclass that computes what nn.LayerNorm does (as timm's LayerNorm)."""

    def forward(self, x):
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)


def test_subclasses_that_compute_the_same_are_swapped():
    model = nn.Sequential(SameLayerNorm(16), nn.MultiheadAttention(16, 2))
    torch_memopt.optimize_(model)
    assert isinstance(model[0], torch_memopt.nn.LayerNorm)
    assert type(model[1].out_proj) is nn.modules.linear.NonDynamicallyQuantizableLinear
    skipped = {e.name: e.reason for e in torch_memopt.last_report().skipped}
    assert "out_proj" in skipped["1.out_proj"]
