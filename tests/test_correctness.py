"""Every op, dtype, device and variant against a float64 reference.

Error metric: ||out - ref|| / ||ref|| (relative Frobenius error), bounded by
what the output dtype's rounding allows on top of fp32 accumulation.
Outputs are poisoned: the allocator is first handed a NaN-filled block of the
output's size, so an element a kernel forgets to write shows up as NaN.
"""

import math

import pytest
import torch
import torch.nn.functional as F

import torch_memopt
from samples import sample_inputs
from conftest import HAS_CUDA, NO_CUDA_REASON
from torch_memopt.bench.calls import relative_error

# Relative error bounds per output dtype: fp32 math rounded once to the output.
TOLERANCE = {torch.float32: 2e-5, torch.float16: 2e-3, torch.bfloat16: 1e-2}

OPS = ["gemm", "linear", "layer_norm", "rms_norm", "softmax"]
TENSOR_CORE_RUNGS = {"mma", "wgmma", "wgmma_split", "gemv", "splitk", "wgmma_streamk"}  # bfloat16 / float16 only
# float32 read as tf32 (10 mantissa bits): its error is bfloat16's order, not float32's.
TF32_RUNGS = {"wgmma_tf32"}
TF32_TOLERANCE = 5e-3


def _variant_params():
    params = []
    for op in OPS:
        for v in torch_memopt.variants(op, "cpu"):
            params.append(pytest.param(op, "cpu", v, id=f"{op}-cpu-{v}"))
        cuda_variants = torch_memopt.variants(op, "cuda") if HAS_CUDA else ["auto"]
        for v in cuda_variants:
            params.append(pytest.param(op, "cuda", v, id=f"{op}-cuda-{v}",
                                       marks=pytest.mark.skipif(not HAS_CUDA, reason=NO_CUDA_REASON)))
    return params


def poison_allocator(like: torch.Tensor):
    """Hand the allocator a NaN block of `like`'s size, then free it, so the op's
    output is likely carved from memory that holds NaN."""
    if like.numel() and like.is_cuda:
        block = torch.full((like.numel(),), float("nan"), dtype=like.dtype, device=like.device)
        del block


@pytest.mark.parametrize("op,device,variant", _variant_params())
def test_matches_float64_reference(op, device, variant, dtype):
    fn = getattr(torch_memopt, op)
    if op in ("gemm", "linear") and variant not in ("auto", "naive", "reference"):
        # The fp32 SIMT ladder refuses half dtypes and the tensor-core rungs
        # float32, each with a message naming the dtypes it takes.
        tensor_core = variant in TENSOR_CORE_RUNGS
        if tensor_core == (dtype == torch.float32):
            case = sample_inputs(op, device, dtype)[1]
            expected_message = ("rung of the bfloat16/float16 tensor-core ladder" if tensor_core
                                else "rung of the fp32 ladder and takes float32")
            with pytest.raises(TypeError, match=expected_message):
                fn(*case.args, **case.kwargs, variant=variant)
            return
    for case in sample_inputs(op, device, dtype):
        expected = case.expected()
        out_dtype = case.kwargs.get("dtype") or (
            case.args[2] if op == "softmax" and len(case.args) > 2 else None
        ) or dtype
        poison_allocator(torch.empty(expected.shape, dtype=out_dtype, device=device))
        out = fn(*case.args, **case.kwargs, variant=variant)
        if device == "cuda":
            torch.cuda.synchronize()
        assert out.shape == expected.shape, case.name
        assert out.dtype == out_dtype, case.name
        assert out.device.type == device, case.name
        assert out.is_contiguous(), case.name
        if out.numel() == 0:
            continue
        assert torch.isfinite(out).all(), f"{case.name}: non-finite output (unwritten or overflow)"
        err = relative_error(out, expected)
        tolerance = TF32_TOLERANCE if variant in TF32_RUNGS else TOLERANCE[out_dtype]
        assert err < tolerance, f"{case.name}: relative error {err:.2e}"


def _special_rows(device, dtype):
    nan, inf = float("nan"), float("inf")
    rows = torch.randn(6, 8, device=device).to(dtype)
    rows[0, 3] = nan  # one NaN: the row turns NaN
    rows[1, :] = -inf  # all -inf: NaN, as torch.softmax
    rows[2, 5] = inf  # one +inf
    rows[3, 0] = -inf  # one -inf: a zero, the rest finite
    rows[4, :] = inf  # all +inf
    return rows


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not HAS_CUDA, reason=NO_CUDA_REASON))])
def test_softmax_nan_and_inf_match_torch(device, dtype):
    x = _special_rows(device, dtype)
    for variant in torch_memopt.variants("softmax", device):
        out = torch_memopt.softmax(x, -1, variant=variant).float().cpu()
        expected = torch.softmax(x.float(), -1).cpu()
        assert torch.equal(out.isnan(), expected.isnan()), variant
        finite = ~expected.isnan()
        torch.testing.assert_close(out[finite], expected[finite], atol=1e-2, rtol=0)


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not HAS_CUDA, reason=NO_CUDA_REASON))])
@pytest.mark.parametrize("op", ["layer_norm", "rms_norm"])
def test_norm_nan_propagates_to_its_row_only(device, op, dtype):
    x = torch.randn(4, 32, device=device).to(dtype)
    x[1, 7] = float("nan")
    for variant in torch_memopt.variants(op, device):
        out = getattr(torch_memopt, op)(x, [32], variant=variant)
        assert out[1].isnan().all(), variant
        assert torch.isfinite(out[[0, 2, 3]]).all(), variant


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not HAS_CUDA, reason=NO_CUDA_REASON))])
def test_linear_relu_keeps_nan(device):
    x = torch.randn(3, 8, device=device)
    x[0, 0] = float("nan")
    w = torch.randn(4, 8, device=device)
    out = torch_memopt.linear(x, w, activation="relu")
    expected = F.relu(F.linear(x, w))
    assert torch.equal(out.isnan(), expected.isnan())


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not HAS_CUDA, reason=NO_CUDA_REASON))])
def test_matches_stock_ops_on_random_inputs(device, dtype):
    """The user's view: ours beside the stock op on the same inputs, in the
    same dtype (both round to it), within a few ulps of the dtype."""
    tol = {torch.float32: 1e-4, torch.float16: 5e-3, torch.bfloat16: 2e-2}[dtype]
    a, b = (torch.randn(96, 80, device=device, dtype=dtype), torch.randn(80, 72, device=device, dtype=dtype))
    w, bias = torch.randn(72, 80, device=device, dtype=dtype), torch.randn(72, device=device, dtype=dtype)
    x = torch.randn(4, 33, 80, device=device, dtype=dtype)
    g = torch.randn(80, device=device, dtype=dtype)
    pairs = {
        "gemm": (torch_memopt.gemm(a, b), torch.mm(a, b)),
        "linear": (torch_memopt.linear(x, w, bias), F.linear(x, w, bias)),
        "layer_norm": (torch_memopt.layer_norm(x, [80], g, g), F.layer_norm(x, [80], g, g)),
        "rms_norm": (torch_memopt.rms_norm(x, [80], g), F.rms_norm(x, [80], g)),
        "softmax": (torch_memopt.softmax(x, 1), torch.softmax(x, 1)),
    }
    for op, (ours, stock) in pairs.items():
        err = relative_error(ours, stock.double())
        assert err < tol, f"{op}: relative difference to stock {err:.2e}"
        assert not math.isnan(err)
