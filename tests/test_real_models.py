"""Drop-in use on real architectures with random weights (torch_memopt.bench.model_zoo):
Hugging Face Llama (eager attention), GPT-2 and BERT, and timm ViT-B/16. Optimized against stock
on the same input: cosine similarity of the outputs ≥ 0.999 and top-1 agreement of the
logits ≥ 99%, through ``optimize_`` and through ``enable()``, with memopt calls counted.

CPU (the CI): small configs in float32, inside ``use_cpu_kernels()``.
CUDA (the H200): the issue's configs in bfloat16 (Llama 8 layers × 2048, GPT-2 small,
BERT base, ViT-B/16).

Top-1 in bfloat16: random-weight models have near-tied logits (GPT-2 small: median
top-2 gap 0.09 at a logit std of 0.55), and bfloat16's own rounding moves their
argmax: stock bf16 agrees with a float32 copy of itself at only 95.7% (GPT-2) and
97.3% (BERT) of 256 positions (CPU, 2026-11-30). Two correct bf16 implementations
therefore differ by about as much, and 99% against stock bf16 can fail with nothing
wrong. So in bf16 the top-1 check is against the float32 truth: memopt must agree
with it no worse than stock bf16 does, less 2% of positions (the spread of two bf16
implementations' flips over 256 positions is ~1.3% one sigma), and the agreement with
stock is printed. float32 runs keep the 99%-against-stock check.
"""
from __future__ import annotations

import copy

import pytest
import torch

import torch_memopt
from conftest import requires_cuda
from memopt_calls import count_memopt_calls
from torch_memopt.bench.model_zoo import BUILDERS

pytest.importorskip("transformers", reason="the real-model tests need transformers")
pytest.importorskip("timm", reason="the real-model tests need timm")

CASES = [pytest.param("cpu", torch.float32, True, id="cpu-small-float32"),
         pytest.param("cuda", torch.bfloat16, False, id="cuda-bfloat16",
                      marks=[requires_cuda, pytest.mark.cuda])]


def agreement(got: torch.Tensor, ref: torch.Tensor) -> tuple[float, float]:
    """(cosine similarity of the flattened outputs, top-1 agreement over the last dim)."""
    got, ref = got.float(), ref.float()
    cosine = torch.nn.functional.cosine_similarity(got.flatten(), ref.flatten(), dim=0).item()
    top1 = (got.argmax(-1) == ref.argmax(-1)).float().mean().item()
    return cosine, top1


def float32_truth(stock: torch.nn.Module, real, inputs: dict) -> torch.Tensor | None:
    """The logits of a float32 copy of a 16-bit model on the same input (None for a
    float32 model: it is its own truth)."""
    if next(stock.parameters()).dtype == torch.float32:
        return None
    inputs32 = {k: v.float() if v.is_floating_point() else v for k, v in inputs.items()}
    with torch.inference_mode():
        return real.logits(copy.deepcopy(stock).float()(**inputs32))


def check(name, got, ref, calls, truth=None):
    cosine, top1 = agreement(got, ref)
    assert sum(calls.values()) > 0, f"{name}: no memopt op ran"
    assert cosine >= 0.999, f"{name}: cosine similarity {cosine:.5f} ({dict(calls)})"
    if truth is None:
        assert top1 >= 0.99, f"{name}: top-1 agreement {top1:.4f} ({dict(calls)})"
        return
    ours, stocks = agreement(got, truth)[1], agreement(ref, truth)[1]
    print(f"{name}: top-1 against stock {top1:.4f}; against float32: memopt {ours:.4f}, "
          f"stock {stocks:.4f}")
    assert ours >= stocks - 0.02, (f"{name}: top-1 against float32 {ours:.4f}, stock bf16's "
                                   f"{stocks:.4f} ({dict(calls)})")


@pytest.mark.parametrize("device, dtype, small", CASES)
@pytest.mark.parametrize("arch", sorted(BUILDERS))
def test_optimize_keeps_the_outputs(arch, device, dtype, small):
    torch.manual_seed(0)
    real = BUILDERS[arch](small, device, dtype)
    stock = copy.deepcopy(real.model)
    inputs = real.make_input(2, 16 if small else 128)
    truth = float32_truth(stock, real, inputs)
    torch_memopt.optimize_(real.model)
    assert torch_memopt.last_report().replaced, f"{arch}: nothing replaced"
    with torch.inference_mode(), torch_memopt.use_cpu_kernels():
        ref = real.logits(stock(**inputs))
        with count_memopt_calls() as calls:
            got = real.logits(real.model(**inputs))
    check(f"{arch} optimize_", got, ref, calls, truth)


@pytest.mark.parametrize("device, dtype, small", CASES)
@pytest.mark.parametrize("arch", sorted(BUILDERS))
def test_enable_keeps_the_outputs(arch, device, dtype, small):
    torch.manual_seed(0)
    real = BUILDERS[arch](small, device, dtype)
    inputs = real.make_input(2, 16 if small else 128)
    truth = float32_truth(real.model, real, inputs)
    with torch.inference_mode(), torch_memopt.use_cpu_kernels():
        ref = real.logits(real.model(**inputs))
        with torch_memopt.enable(), count_memopt_calls() as calls:
            got = real.logits(real.model(**inputs))
    check(f"{arch} enable()", got, ref, calls, truth)
