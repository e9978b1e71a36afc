"""Drop-in use on real architectures with random weights (tests/real_models.py): Hugging
Face Llama (eager attention), GPT-2 and BERT, and timm ViT-B/16. Optimized against stock
on the same input: cosine similarity of the outputs ≥ 0.999 and top-1 agreement of the
logits ≥ 99%, through ``optimize_`` and through ``enable()``, with memopt calls counted.

CPU (the CI): small configs in float32, inside ``use_cpu_kernels()``.
CUDA (the H200): the issue's configs in bfloat16 (Llama 8 layers × 2048, GPT-2 small,
BERT base, ViT-B/16).
"""
import copy

import pytest
import torch

import torch_memopt
from conftest import requires_cuda
from memopt_calls import count_memopt_calls
from real_models import BUILDERS

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


def check(name, got, ref, calls):
    cosine, top1 = agreement(got, ref)
    assert sum(calls.values()) > 0, f"{name}: no memopt op ran"
    assert cosine >= 0.999, f"{name}: cosine similarity {cosine:.5f} ({dict(calls)})"
    assert top1 >= 0.99, f"{name}: top-1 agreement {top1:.4f} ({dict(calls)})"


@pytest.mark.parametrize("device, dtype, small", CASES)
@pytest.mark.parametrize("arch", sorted(BUILDERS))
def test_optimize_keeps_the_outputs(arch, device, dtype, small):
    torch.manual_seed(0)
    real = BUILDERS[arch](small, device, dtype)
    stock = copy.deepcopy(real.model)
    inputs = real.make_input(2, 16 if small else 128)
    torch_memopt.optimize_(real.model)
    assert torch_memopt.last_report().replaced, f"{arch}: nothing replaced"
    with torch.inference_mode(), torch_memopt.use_cpu_kernels():
        ref = real.logits(stock(**inputs))
        with count_memopt_calls() as calls:
            got = real.logits(real.model(**inputs))
    check(f"{arch} optimize_", got, ref, calls)


@pytest.mark.parametrize("device, dtype, small", CASES)
@pytest.mark.parametrize("arch", sorted(BUILDERS))
def test_enable_keeps_the_outputs(arch, device, dtype, small):
    torch.manual_seed(0)
    real = BUILDERS[arch](small, device, dtype)
    inputs = real.make_input(2, 16 if small else 128)
    with torch.inference_mode(), torch_memopt.use_cpu_kernels():
        ref = real.logits(real.model(**inputs))
        with torch_memopt.enable(), count_memopt_calls() as calls:
            got = real.logits(real.model(**inputs))
    check(f"{arch} enable()", got, ref, calls)
