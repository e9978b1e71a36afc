"""softmax's cluster kernel holding 16-bit rows past online's registers
(softmax_launch.cuh's launch_cluster_held): each row over the fewest CTAs whose
registers hold it as loaded, 64 elements a thread: 4 or 8 CTAs of 512 threads (two an
SM) up to 262144 columns, 8 of 1024 past that, where the clusters fill every SM. What
test_softmax_ladder.py cannot see: the shape each width takes at its edges (65544,
131072 / 131080, 262144 / 262152, 524288); that auto takes it only for many rows of
16-bit input whose width is whole 16-byte packs; a float32 output; rows read in place
from a strided view; the special values split across CTAs; every output element
written; the same bits every run."""

import pytest
import torch

import torch_memopt
from conftest import requires_cuda
from held_rows import fill_rows, held_cluster_run, held_shape, sms
from torch_memopt.bench.calls import relative_error

pytestmark = [requires_cuda, pytest.mark.cuda]

TOLERANCE = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1e-2}


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("n", [65544, 100000, 128256, 131072, 131080, 256000, 262144, 262152, 524288])
def test_auto_holds_16_bit_rows_over_the_fewest_ctas(dtype, n):
    rows = fill_rows(n) + 1  # a last cluster alone in its wave
    x = torch.randn(rows, n, device="cuda", dtype=dtype) * 4
    assert held_cluster_run(lambda: torch_memopt.softmax(x, -1)) == held_shape(n)
    ref = torch.softmax(x.double(), -1)
    for out_dtype in (None, torch.float32):
        out = torch_memopt.softmax(x, -1, out_dtype)
        assert out.dtype == (out_dtype or dtype)
        assert relative_error(out, ref) < TOLERANCE[out_dtype or dtype], (n, out_dtype)
        sums = out.double().sum(-1)
        assert torch.allclose(sums, torch.ones_like(sums), atol=TOLERANCE[out_dtype or dtype] * 10)


@pytest.mark.parametrize("n", [65537, 131073, 262145])
def test_widths_off_the_16_byte_pack_take_other_kernels(n):
    """The held kernel loads whole 16-byte packs only (online_ready): a width off the
    pack goes to the kernels auto had for it before, and still matches float64."""
    x = torch.randn(fill_rows(n - 1), n, device="cuda", dtype=torch.bfloat16) * 4
    assert held_cluster_run(lambda: torch_memopt.softmax(x, -1)) == (0, 0)
    assert relative_error(torch_memopt.softmax(x, -1), torch.softmax(x.double(), -1)) < 1e-2


@pytest.mark.parametrize("n", [70000, 200000])
def test_rows_read_in_place_from_a_strided_view(n):
    """Rows 8 elements apart more than their width: 16-byte aligned, not contiguous."""
    wide = torch.randn(fill_rows(n), n + 8, device="cuda", dtype=torch.bfloat16) * 4
    x = wide[:, :n]
    assert not x.is_contiguous()
    assert held_cluster_run(lambda: torch_memopt.softmax(x, -1)) == held_shape(n)
    assert relative_error(torch_memopt.softmax(x, -1), torch.softmax(x.double(), -1)) < 1e-2


def test_few_rows_fp32_and_rows_past_eight_ctas_take_other_kernels():
    """Fewer rows than fill the SMs keep the 8-CTA cluster of 512 / 1024 threads (few
    wide rows); fp32 is not this kernel's; past 8 CTAs' registers (524288) nothing holds
    the row. Each still matches float64."""
    n = 128256
    cases = [torch.randn(fill_rows(n) - 1, n, device="cuda", dtype=torch.bfloat16),
             torch.randn(fill_rows(n), n, device="cuda"),
             torch.randn(sms(), 600000, device="cuda", dtype=torch.bfloat16)]
    for x in cases:
        assert held_cluster_run(lambda: torch_memopt.softmax(x, -1)) == (0, 0), (tuple(x.shape), x.dtype)
        ref = torch.softmax(x.double(), -1)
        assert relative_error(torch_memopt.softmax(x, -1), ref) < TOLERANCE[x.dtype], tuple(x.shape)


@pytest.mark.parametrize("n", [131072, 256000])
def test_special_values_split_across_ctas_match_torch(n):
    """NaN in one CTA's slice, +inf in another's, whole rows and whole slices of -inf,
    finfo.min rows (masked attention): the CTAs' (max, sum) pairs merge as torch's
    row-wide softmax does."""
    rows = fill_rows(n)
    x = torch.randn(rows, n, device="cuda", dtype=torch.bfloat16)
    x[1, n - 7] = float("nan")
    x[2, 3] = float("inf")
    x[3] = float("-inf")
    x[4, ::2] = float("-inf")
    x[4, n // 2:] = float("-inf")  # the last CTAs' slices all -inf, the first's half
    x[5] = torch.finfo(torch.bfloat16).min
    assert held_cluster_run(lambda: torch_memopt.softmax(x, -1)) == held_shape(n)
    expected = torch.softmax(x.float(), -1)
    out = torch_memopt.softmax(x, -1, torch.float32)
    assert torch.equal(out.isnan(), expected.isnan())
    finite = expected.isfinite()
    assert torch.allclose(out[finite], expected[finite], rtol=1e-2, atol=1e-6)
    assert torch.allclose(out[5], torch.full_like(out[5], 1 / n))


def test_output_from_poisoned_memory_is_all_written():
    """The allocator first hands out (and takes back) a NaN block of the output's size:
    every element of every row must be overwritten."""
    n = 200000
    x = torch.randn(fill_rows(n), n, device="cuda", dtype=torch.float16)
    ref = torch.softmax(x.double(), -1)
    block = torch.full_like(x, float("nan"))
    del block
    out = torch_memopt.softmax(x, -1)
    assert not out.isnan().any()
    # 1 / 200000 is near float16's subnormals, where rounding alone costs ~2e-3: held
    # to torch's own float16 result's error, with a margin.
    assert relative_error(out, ref) < 1.25 * relative_error(torch.softmax(x, -1), ref)


def test_two_runs_are_bit_equal():
    """The CTAs' pairs merge in rank order: the same bits every run."""
    n = 256000
    x = torch.randn(fill_rows(n), n, device="cuda", dtype=torch.bfloat16) * 8
    assert torch.equal(torch_memopt.softmax(x, -1), torch_memopt.softmax(x, -1))
