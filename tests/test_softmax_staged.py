"""softmax's staged rung (kernels/v06_staged.cuh): persistent blocks with two rows in
shared memory, the next copied in by cp.async while this one is reduced and written.
What the ladder-wide tests (test_softmax_ladder.py) cannot see: that the rung runs its
own kernel wherever its buffers fit and hands other rows to auto's kernels; the row
loop over many rows a block (both buffers in turn, the last row without a successor);
rows at every offset in their 16-byte chunks (x and y, lined up or not); a float32
output from 16-bit rows; rows read in place from a strided view; rows too wide for one
block split over a cluster of 2 CTAs (where one block's buffers do not fit, or forced),
their pairs merged in the same order every run."""

import re

import pytest
import torch

import torch_memopt
from conftest import requires_cuda
from cuda_kernels import kernels_run
from torch_memopt.bench.calls import relative_error

pytestmark = [requires_cuda, pytest.mark.cuda]

TOLERANCE = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1e-2}


def staged(x, out_dtype=None):
    return torch_memopt.softmax(x, -1, out_dtype, variant="staged")


def runs_staged(x) -> bool:
    names = kernels_run(lambda: staged(x))
    return len(names) == 1 and "softmax_staged_kernel" in names[0]


def staged_cluster_run(x) -> int:
    """The CTAs a row the staged kernel took (its kCluster), 0 if it did not run."""
    names = kernels_run(lambda: staged(x))
    found = [re.search(r"softmax_staged_kernel<[^<>]*?, (\d+), 1024>", n) for n in names]
    return int(found[0].group(1)) if len(names) == 1 and found[0] else 0


@pytest.fixture
def cluster_override():
    """Sets _C._set_softmax_staged_cluster for the test and puts the rule back after."""
    previous = []

    def set_cluster(n):
        previous.append(torch_memopt._C._set_softmax_staged_cluster(n))

    yield set_cluster
    if previous:
        torch_memopt._C._set_softmax_staged_cluster(previous[0])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("rows, n", [(1, 1), (7, 33), (300, 4097), (3, 20000), (401, 8191), (5000, 1000)])
def test_against_float64_any_width_and_row_count(dtype, rows, n):
    """401 rows over at most 264 blocks: rows past the first of a block, both buffers;
    5000 rows of 1000: ~19 rows a block."""
    x = torch.randn(rows, n, device="cuda", dtype=dtype) * 4
    ref = torch.softmax(x.double(), -1)
    assert runs_staged(x)
    for out_dtype in (None, torch.float32):
        out = staged(x, out_dtype)
        assert out.dtype == (out_dtype or dtype)
        assert relative_error(out, ref) < TOLERANCE[out_dtype or dtype], (rows, n, out_dtype)
        assert torch.allclose(out.double().sum(-1), torch.ones(rows, dtype=torch.float64, device="cuda"),
                              atol=TOLERANCE[out_dtype or dtype] * 10)


@pytest.mark.parametrize("n", [32000, 32001, 50257])
def test_vocabulary_rows_in_16_bit(n):
    """The widths the rung is for: one 16-bit row of 64-100 KB a buffer, one block an SM."""
    x = torch.randn(517, n, device="cuda", dtype=torch.bfloat16) * 4
    assert runs_staged(x)
    assert relative_error(staged(x), torch.softmax(x.double(), -1)) < 1e-2


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("offset", [1, 3, 5])
def test_rows_off_their_16_byte_chunks(dtype, offset):
    """A slice `offset` elements into rows 11 elements longer than the width: every row
    starts at another offset in its chunk, and y's rows (contiguous) at yet another, so
    the output goes one element a store."""
    n = 3001
    wide = torch.randn(133, n + 11, device="cuda", dtype=dtype) * 4
    x = wide[:, offset:offset + n]
    assert x.data_ptr() % 16 != 0 and runs_staged(x)
    ref = torch.softmax(x.double(), -1)
    for out_dtype in (None, torch.float32):
        assert relative_error(staged(x, out_dtype), ref) < TOLERANCE[out_dtype or dtype]


@pytest.mark.parametrize("n, cluster", [(50257, 1), (100000, 2)])
def test_special_values_and_masked_rows_match_torch(n, cluster):
    """Over 2 CTAs, row 4's second half is -inf: a whole slice of -inf beside a finite one."""
    x = torch.randn(6, n, device="cuda", dtype=torch.bfloat16)
    x[1, n - 7] = float("nan")
    x[2, 3] = float("inf")
    x[3] = float("-inf")
    x[4, ::2] = float("-inf")
    x[4, n // 2:] = float("-inf")
    x[5] = torch.finfo(torch.bfloat16).min
    assert staged_cluster_run(x) == cluster
    expected = torch.softmax(x.float(), -1)
    out = staged(x, torch.float32)
    assert torch.equal(out.isnan(), expected.isnan())
    finite = expected.isfinite()
    assert torch.allclose(out[finite], expected[finite], rtol=1e-2, atol=1e-6)
    assert torch.allclose(out[5], torch.full_like(out[5], 1 / n))


@pytest.mark.parametrize("dtype, n", [(torch.bfloat16, 128256), (torch.float32, 65536)])
def test_rows_past_two_ctas_buffers_run_what_auto_runs(dtype, n):
    """256 KB rows: half of two buffers (256 KB) passes a block's 227 KB."""
    x = torch.randn(4, n, device="cuda", dtype=dtype)
    assert not runs_staged(x)
    assert kernels_run(lambda: staged(x)) == kernels_run(lambda: torch_memopt.softmax(x, -1))
    assert relative_error(staged(x), torch.softmax(x.double(), -1)) < TOLERANCE[dtype]


def test_an_inner_dim_runs_naive():
    x = torch.randn(3, 500, 7, device="cuda")
    names = kernels_run(lambda: torch_memopt.softmax(x, 1, variant="staged"))
    assert len(names) == 1 and "naive" in names[0], names
    assert relative_error(torch_memopt.softmax(x, 1, variant="staged"), torch.softmax(x.double(), 1)) < 1e-5


def test_auto_takes_staged_for_many_16_bit_rows_past_32768_columns():
    """Where it measured faster than online (staged_beats_online in softmax_cuda.cu):
    50257 bf16 columns at more than two rows an SM; not at 32000 (online's 512-thread
    blocks), nor for few rows (a block a row: nothing to prefetch), nor in fp32 that
    online holds."""
    rows = 2 * torch.cuda.get_device_properties(0).multi_processor_count
    many = torch.randn(rows, 50257, device="cuda", dtype=torch.bfloat16)
    names = kernels_run(lambda: torch_memopt.softmax(many, -1))
    assert len(names) == 1 and "softmax_staged_kernel" in names[0], names
    for x in (torch.randn(rows, 32000, device="cuda", dtype=torch.bfloat16),
              torch.randn(64, 50257, device="cuda", dtype=torch.bfloat16),
              torch.randn(rows, 20000, device="cuda")):
        names = kernels_run(lambda: torch_memopt.softmax(x, -1))
        assert len(names) == 1 and "staged" not in names[0], (tuple(x.shape), x.dtype, names)


@pytest.mark.parametrize("dtype, n, cluster", [
    (torch.bfloat16, 50257, 1), (torch.bfloat16, 65536, 2), (torch.float16, 100000, 2),
    (torch.float32, 20000, 1), (torch.float32, 32000, 2), (torch.float32, 50257, 2)])
def test_rule_takes_the_fewest_ctas_whose_buffers_fit(dtype, n, cluster):
    x = torch.randn(3, n, device="cuda", dtype=dtype)
    assert staged_cluster_run(x) == cluster


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("rows, n", [(1, 1), (5, 7), (3, 97), (300, 4097), (37, 40001)])
def test_cluster_against_float64(cluster_override, dtype, rows, n):
    """Any width over 2 CTAs: slices of whole chunks, the second empty at 1 x 1, the end
    elements in whichever slice holds them; 300 rows past the resident clusters (both
    buffers and both pair slots in turn)."""
    cluster_override(2)
    x = torch.randn(rows, n, device="cuda", dtype=dtype) * 4
    ref = torch.softmax(x.double(), -1)
    assert staged_cluster_run(x) == 2
    for out_dtype in (None, torch.float32):
        out = staged(x, out_dtype)
        assert relative_error(out, ref) < TOLERANCE[out_dtype or dtype], (rows, n, out_dtype)
        assert torch.allclose(out.double().sum(-1), torch.ones(rows, dtype=torch.float64, device="cuda"),
                              atol=TOLERANCE[out_dtype or dtype] * 10)


@pytest.mark.parametrize("offset", [1, 3])
def test_cluster_rows_off_their_16_byte_chunks(cluster_override, offset):
    """Rows starting at every offset of their chunk, y's at others: the slices' bounds
    move from row to row, and the output goes one element a store."""
    cluster_override(2)
    n = 30001
    wide = torch.randn(141, n + 11, device="cuda", dtype=torch.bfloat16) * 4
    x = wide[:, offset:offset + n]
    assert staged_cluster_run(x) == 2
    ref = torch.softmax(x.double(), -1)
    for out_dtype in (None, torch.float32):
        assert relative_error(staged(x, out_dtype), ref) < TOLERANCE[out_dtype or torch.bfloat16]


def test_cluster_runs_are_bit_equal():
    x = torch.randn(523, 50257, device="cuda") * 4
    first = staged(x)
    assert staged_cluster_run(x) == 2
    assert torch.equal(first, staged(x))


def test_override_that_does_not_fit_takes_the_rule(cluster_override):
    """One CTA cannot hold two 100000-wide bf16 rows: the rule's 2 runs instead."""
    cluster_override(1)
    x = torch.randn(3, 100000, device="cuda", dtype=torch.bfloat16)
    assert staged_cluster_run(x) == 2
    assert relative_error(staged(x), torch.softmax(x.double(), -1)) < 1e-2


def test_cluster_override_rejects_other_sizes():
    with pytest.raises(ValueError, match="0 \\(the rule\\), 1 or 2, got 4"):
        torch_memopt._C._set_softmax_staged_cluster(4)


def test_auto_takes_two_ctas_for_many_fp32_rows_past_online_registers():
    """Where staged over 2 CTAs measured faster than cluster's 8 (staged_beats_online):
    fp32 past 32768 columns from a row an SM; not at 32000 (online holds it), nor for
    fewer rows, nor for 16-bit rows that two CTAs hold (online or cluster there)."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    many = torch.randn(sms, 50257, device="cuda")
    assert kernels_run(lambda: torch_memopt.softmax(many, -1)) == kernels_run(lambda: staged(many))
    assert staged_cluster_run(many) == 2
    for x in (torch.randn(sms, 32000, device="cuda"), torch.randn(sms // 2, 50257, device="cuda"),
              torch.randn(2 * sms, 100000, device="cuda", dtype=torch.bfloat16)):
        names = kernels_run(lambda: torch_memopt.softmax(x, -1))
        assert len(names) == 1 and "staged" not in names[0], (tuple(x.shape), x.dtype, names)
