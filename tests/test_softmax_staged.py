"""softmax's staged rung (kernels/v06_staged.cuh): persistent blocks with two rows in
shared memory, the next copied in by cp.async while this one is reduced and written.
What the ladder-wide tests (test_softmax_ladder.py) cannot see: that the rung runs its
own kernel wherever its buffers fit and hands other rows to auto's kernels; the row
loop over many rows a block (both buffers in turn, the last row without a successor);
rows at every offset in their 16-byte chunks (x and y, lined up or not); a float32
output from 16-bit rows; rows read in place from a strided view."""

import pytest
import torch

import torch_memopt
from conftest import requires_cuda
from cuda_kernels import kernels_run

pytestmark = [requires_cuda, pytest.mark.cuda]

TOLERANCE = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1e-2}


def rel_error(out, ref):
    return ((out.double() - ref).norm() / ref.norm()).item()


def staged(x, out_dtype=None):
    return torch_memopt.softmax(x, -1, out_dtype, variant="staged")


def runs_staged(x) -> bool:
    names = kernels_run(lambda: staged(x))
    return len(names) == 1 and "softmax_staged_kernel" in names[0]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("rows, n", [(1, 1), (7, 33), (300, 4097), (3, 20000), (401, 8191)])
def test_against_float64_any_width_and_row_count(dtype, rows, n):
    """401 rows over at most 264 blocks: rows past the first of a block, both buffers."""
    x = torch.randn(rows, n, device="cuda", dtype=dtype) * 4
    ref = torch.softmax(x.double(), -1)
    assert runs_staged(x)
    for out_dtype in (None, torch.float32):
        out = staged(x, out_dtype)
        assert out.dtype == (out_dtype or dtype)
        assert rel_error(out, ref) < TOLERANCE[out_dtype or dtype], (rows, n, out_dtype)
        assert torch.allclose(out.double().sum(-1), torch.ones(rows, dtype=torch.float64, device="cuda"),
                              atol=TOLERANCE[out_dtype or dtype] * 10)


@pytest.mark.parametrize("n", [32000, 32001, 50257])
def test_vocabulary_rows_in_16_bit(n):
    """The widths the rung is for: one 16-bit row of 64-100 KB a buffer, one block an SM."""
    x = torch.randn(517, n, device="cuda", dtype=torch.bfloat16) * 4
    assert runs_staged(x)
    assert rel_error(staged(x), torch.softmax(x.double(), -1)) < 1e-2


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
        assert rel_error(staged(x, out_dtype), ref) < TOLERANCE[out_dtype or dtype]


def test_special_values_and_masked_rows_match_torch():
    x = torch.randn(6, 50257, device="cuda", dtype=torch.bfloat16)
    x[1, 7] = float("nan")
    x[2, 3] = float("inf")
    x[3] = float("-inf")
    x[4, ::2] = float("-inf")
    x[5] = torch.finfo(torch.bfloat16).min
    expected = torch.softmax(x.float(), -1)
    out = staged(x, torch.float32)
    assert torch.equal(out.isnan(), expected.isnan())
    finite = expected.isfinite()
    assert torch.allclose(out[finite], expected[finite], rtol=1e-2, atol=1e-6)
    assert torch.allclose(out[5], torch.full_like(out[5], 1 / 50257))


@pytest.mark.parametrize("dtype, n", [(torch.bfloat16, 65536), (torch.float32, 32768)])
def test_rows_past_two_buffers_run_what_auto_runs(dtype, n):
    x = torch.randn(4, n, device="cuda", dtype=dtype)
    assert not runs_staged(x)
    assert kernels_run(lambda: staged(x)) == kernels_run(lambda: torch_memopt.softmax(x, -1))
    assert rel_error(staged(x), torch.softmax(x.double(), -1)) < TOLERANCE[dtype]


def test_an_inner_dim_runs_naive():
    x = torch.randn(3, 500, 7, device="cuda")
    names = kernels_run(lambda: torch_memopt.softmax(x, 1, variant="staged"))
    assert len(names) == 1 and "naive" in names[0], names
    assert rel_error(torch_memopt.softmax(x, 1, variant="staged"), torch.softmax(x.double(), 1)) < 1e-5


def test_auto_takes_staged_for_many_16_bit_rows_past_32768_columns():
    """Where it measured faster than online (staged_beats_online in softmax_cuda.cu):
    50257 bf16 columns at more than two rows an SM; not at 32000 (online's 512-thread
    blocks), nor for few rows (a block a row: nothing to prefetch), nor in fp32."""
    rows = 2 * torch.cuda.get_device_properties(0).multi_processor_count
    many = torch.randn(rows, 50257, device="cuda", dtype=torch.bfloat16)
    names = kernels_run(lambda: torch_memopt.softmax(many, -1))
    assert len(names) == 1 and "softmax_staged_kernel" in names[0], names
    for x in (torch.randn(rows, 32000, device="cuda", dtype=torch.bfloat16),
              torch.randn(64, 50257, device="cuda", dtype=torch.bfloat16),
              torch.randn(rows, 20000, device="cuda")):
        names = kernels_run(lambda: torch_memopt.softmax(x, -1))
        assert len(names) == 1 and "staged" not in names[0], (tuple(x.shape), x.dtype, names)
