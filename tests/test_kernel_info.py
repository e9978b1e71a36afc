"""torch_memopt.kernel_info(op, variant): the ptxas report of each rung's kernels,
read at run time through cudaFuncGetAttributes."""

import pytest

import torch_memopt
from torch_memopt import _C
from conftest import HAS_CUDA, requires_cuda

OPS = ["gemm", "linear", "layer_norm", "rms_norm", "softmax", "add_layer_norm", "add_rms_norm"]
KEYS = {"label", "registers", "static_shared_bytes", "local_bytes", "max_threads_per_block",
        "max_dynamic_shared_bytes"}

requires_cuda_build = pytest.mark.skipif(
    not torch_memopt.built_with_cuda(), reason="this build has no CUDA kernels to describe"
)


def cuda_rungs(op):
    """Every CUDA rung of `op` in this build, "auto" left out: the list a Hopper
    GPU gets (_C.variants answers without a GPU; torch_memopt.variants would
    return [] here)."""
    return _C.variants(op, "cuda", 90)[1:]


@pytest.mark.skipif(HAS_CUDA, reason="checks the answer of a machine without a GPU")
def test_needs_a_gpu():
    with pytest.raises(RuntimeError, match=r"needs a CUDA (build and a CUDA )?GPU"):
        torch_memopt.kernel_info("gemm", "naive")


def test_unknown_op():
    with pytest.raises(ValueError, match=r"unknown op 'matmul'; ops: gemm, linear"):
        torch_memopt.kernel_info("matmul", "naive")


@requires_cuda_build
def test_unknown_variant_lists_the_ladder():
    with pytest.raises(
        ValueError,
        match=r"gemm has no variant 'fastest'; variants: naive, coalesced, smem_tiled, "
        r"smem_padded, double_buffered, register_blocked, vectorized, warptiled, mma, wgmma, "
        r"wgmma_split, gemv, splitk, wgmma_tf32, wgmma_streamk$",
    ):
        torch_memopt.kernel_info("gemm", "fastest")


@requires_cuda_build
def test_auto_is_not_one_kernel():
    with pytest.raises(ValueError, match=r"no variant 'auto' \(auto picks one of the others"):
        torch_memopt.kernel_info("softmax", "auto")


@requires_cuda_build
@pytest.mark.skipif(HAS_CUDA, reason="the CUDA test reads every rung's attributes")
@pytest.mark.parametrize("op", OPS)
def test_every_rung_has_kernels_registered(op):
    """The lookup comes before the device check: a registered rung asks for a
    GPU, an unregistered one would raise ValueError."""
    for variant in cuda_rungs(op):
        with pytest.raises(RuntimeError, match="needs a CUDA GPU"):
            torch_memopt.kernel_info(op, variant)


@requires_cuda
@pytest.mark.cuda
@pytest.mark.parametrize("op", OPS)
def test_attributes_of_every_rung(op):
    for variant in torch_memopt.variants(op, "cuda"):
        if variant == "auto":
            continue
        kernels = torch_memopt.kernel_info(op, variant)
        assert kernels, variant
        for kernel in kernels:
            assert set(kernel) == KEYS
            assert 1 <= kernel["registers"] <= 255, (variant, kernel)
            assert kernel["local_bytes"] >= 0, (variant, kernel)
            assert kernel["static_shared_bytes"] >= 0, (variant, kernel)
            assert kernel["max_threads_per_block"] >= 32, (variant, kernel)
            assert kernel["max_dynamic_shared_bytes"] >= 0, (variant, kernel)


@requires_cuda
@pytest.mark.cuda
def test_shared_memory_is_reported():
    # smem_tiled stages two 32 x 32 fp32 tiles in static shared memory.
    for kernel in torch_memopt.kernel_info("gemm", "smem_tiled"):
        assert kernel["static_shared_bytes"] >= 2 * 32 * 32 * 4, kernel
    if "wgmma" in torch_memopt.variants("gemm", "cuda"):
        for kernel in torch_memopt.kernel_info("gemm", "wgmma"):
            assert kernel["static_shared_bytes"] + kernel["max_dynamic_shared_bytes"] > 0, kernel
