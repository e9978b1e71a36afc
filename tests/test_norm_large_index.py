"""Norms, fused add + norm and softmax past 2^31 elements (issue 5: 64-bit indexing).

65537 rows x 32768 bf16 columns is 2^31 + 32768 elements (4 GiB): an element offset
held in 32 bits would wrap on the last row. Rows are independent, so the float64
reference is computed for the first and the last rows only (a full one would take
16 GiB). Every CUDA variant runs, so each rung's row arithmetic is covered; the
cluster rungs take rows this wide only with the variant forced (auto keeps them
for rows past one block's registers) and fall back to online / vectorized here.
"""

import pytest
import torch
import torch.nn.functional as F

import torch_memopt
from conftest import requires_cuda
from torch_memopt.bench.calls import relative_error

ROWS, N = 65537, 32768  # ROWS * N = 2**31 + N
CHECKED = [0, 1, ROWS - 2, ROWS - 1]
TOLERANCE = 1e-2  # bf16


def enough_memory():
    if not torch.cuda.is_available():
        return False
    free, _ = torch.cuda.mem_get_info()
    return free > 24 * 2**30  # input, output, sum and a residual of 4 GiB each, and slack


pytestmark = [
    requires_cuda,
    pytest.mark.cuda,
    pytest.mark.skipif(not enough_memory(), reason="needs 24 GiB of free GPU memory"),
    pytest.mark.xdist_group("large_memory"),  # with test_gemm_large_index, one at a time
]


@pytest.fixture(scope="module")
def x():
    assert ROWS * N > 2**31
    torch.manual_seed(0)
    return torch.randn(ROWS, N, device="cuda", dtype=torch.bfloat16)


def check_rows(out, ref_of_rows, what):
    assert out.shape == (ROWS, N), what
    picked = out[CHECKED]
    assert torch.isfinite(picked).all(), f"{what}: non-finite values in the checked rows"
    err = relative_error(picked, ref_of_rows)
    assert err < TOLERANCE, f"{what}: relative error {err:.2e} on rows {CHECKED}"


@pytest.mark.parametrize("op", ["layer_norm", "rms_norm"])
def test_norm_past_2_31_elements(x, op):
    weight = torch.randn(N, device="cuda", dtype=torch.bfloat16)
    bias = torch.randn(N, device="cuda", dtype=torch.bfloat16)
    rows = x[CHECKED].double()
    if op == "layer_norm":
        ref = F.layer_norm(rows, (N,), weight.double(), bias.double(), 1e-5)
    else:
        ref = F.rms_norm(rows, (N,), weight.double(), 1e-6)
    for variant in torch_memopt.variants(op, "cuda"):
        if op == "layer_norm":
            out = torch_memopt.layer_norm(x, [N], weight, bias, 1e-5, variant=variant)
        else:
            out = torch_memopt.rms_norm(x, [N], weight, 1e-6, variant=variant)
        check_rows(out, ref, f"{op} {variant}")
        del out


def test_softmax_past_2_31_elements(x):
    ref = torch.softmax(x[CHECKED].double(), -1)
    for variant in torch_memopt.variants("softmax", "cuda"):
        out = torch_memopt.softmax(x, -1, variant=variant)
        check_rows(out, ref, f"softmax {variant}")
        del out


@pytest.mark.parametrize("op", ["add_layer_norm", "add_rms_norm"])
def test_fused_add_norm_past_2_31_elements(x, op):
    residual = torch.randn(ROWS, N, device="cuda", dtype=torch.bfloat16)
    weight = torch.randn(N, device="cuda", dtype=torch.bfloat16)
    summed = (x[CHECKED] + residual[CHECKED]).double()
    if op == "add_layer_norm":
        out, total = torch_memopt.add_layer_norm(x, residual, [N], weight, None, 1e-5)
        ref = F.layer_norm(summed, (N,), weight.double(), None, 1e-5)
    else:
        out, total = torch_memopt.add_rms_norm(x, residual, [N], weight, 1e-6)
        ref = F.rms_norm(summed, (N,), weight.double(), 1e-6)
    check_rows(total, summed, f"{op} sum")
    check_rows(out, ref, op)
