"""torch_memopt.variants(op): what this build and device can run."""

import pytest
import torch

import torch_memopt
from conftest import HAS_CUDA, requires_cuda

OPS = ["gemm", "linear", "layer_norm", "rms_norm", "softmax"]


@pytest.mark.parametrize("op", OPS)
def test_cpu_variants(op):
    assert torch_memopt.variants(op, "cpu") == ["auto", "reference"]
    assert torch_memopt.variants(op, torch.device("cpu")) == ["auto", "reference"]


@pytest.mark.parametrize("op", OPS)
def test_default_device_is_the_gpu_when_present(op):
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert torch_memopt.variants(op) == torch_memopt.variants(op, expected)


@pytest.mark.skipif(HAS_CUDA, reason="checks the answer of a machine without a GPU")
def test_no_cuda_variants_without_a_gpu():
    assert torch_memopt.variants("gemm", "cuda") == []


@requires_cuda
@pytest.mark.parametrize("op", OPS)
def test_cuda_variants_start_with_auto_and_the_first_rung(op):
    names = torch_memopt.variants(op, "cuda")
    assert names[:2] == ["auto", "naive"]


def test_unknown_op():
    with pytest.raises(ValueError, match=r"unknown op 'matmul'; ops: gemm, linear"):
        torch_memopt.variants("matmul")


def test_built_with_cuda_follows_the_toolkit():
    """CI has nvcc and no GPU: the CUDA kernels must still be compiled in,
    unless the build was asked to leave them out."""
    import os
    import shutil

    if os.environ.get("MEMOPT_CPU_ONLY") == "1" or shutil.which("nvcc") is None:
        pytest.skip("no CUDA toolkit at build time, or MEMOPT_CPU_ONLY=1")
    assert torch_memopt.built_with_cuda()
