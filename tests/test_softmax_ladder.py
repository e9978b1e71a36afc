"""The softmax ladder rungs on CUDA (issue 5): every rung at the widths that take
each of its paths, against a float64 reference; NaN, -inf and all -inf rows as
torch.softmax has them; a float32 output from 16-bit input; a softmax over an
inner dim (the rungs after naive hand it to naive).

Widths: 33 (no whole 16-byte pack: online falls back), 197, 500 and 1000 (several
rows a block in online; warp_per_row's 8-, 16- and 32-element caches), 4096, 20000
(past warp_per_row's registers), 65536 (past the shared-memory cache of 16-bit rows
and online's registers: the re-read paths; the cluster rung with 512-thread CTAs)
and 262144 (one row of the vocabulary-size kind: cluster with 1024-thread CTAs).
"""

import pytest
import torch

import torch_memopt
from conftest import requires_cuda

TOLERANCE = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1e-2}
SHAPES = [(5, 33), (37, 197), (11, 500), (9, 1000), (7, 4096), (3, 20000), (2, 65536), (1, 262144)]
DTYPES = [pytest.param(d, id=str(d)[6:]) for d in (torch.float32, torch.float16, torch.bfloat16)]


def cuda_variants():
    return torch_memopt.variants("softmax", "cuda") if torch.cuda.is_available() else []


def rel_error(out, ref):
    return ((out.double() - ref).norm() / ref.norm()).item()


@requires_cuda
@pytest.mark.cuda
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_rung_at_every_path(dtype):
    failures = []
    for rows, n in SHAPES:
        x = torch.randn(rows, n, device="cuda", dtype=dtype) * 4
        ref = torch.softmax(x.double(), -1)
        for variant in cuda_variants():
            for out_dtype in (None, torch.float32):
                out = torch_memopt.softmax(x, -1, out_dtype, variant=variant)
                err = rel_error(out, ref)
                tol = TOLERANCE[out_dtype or dtype]
                if out.dtype != (out_dtype or dtype) or not err < tol:
                    failures.append(f"{variant} {rows}x{n} -> {out.dtype}: relative error {err:.2e}")
    assert not failures, "\n".join(failures)


@requires_cuda
@pytest.mark.cuda
@pytest.mark.parametrize("n", [1000, 4096, 65536])
def test_nan_inf_and_all_minus_inf_rows_match_torch(n):
    x = torch.randn(5, n, device="cuda", dtype=torch.bfloat16)
    x[1, 7] = float("nan")
    x[2, 3] = float("inf")
    x[3] = float("-inf")
    x[4, ::2] = float("-inf")
    expected = torch.softmax(x.float(), -1)
    for variant in cuda_variants():
        out = torch_memopt.softmax(x, -1, torch.float32, variant=variant)
        assert torch.equal(out.isnan(), expected.isnan()), f"{variant}: NaN pattern differs"
        finite = expected.isfinite()
        assert torch.allclose(out[finite], expected[finite], rtol=1e-2, atol=1e-6), variant


def attention_masked_scores(rows: int, n: int, dtype: torch.dtype, device: str) -> torch.Tensor:
    """Scores as HF attention hands them to softmax: a causal mask filled with
    finfo(dtype).min (finite, not -inf), added to the scores, so later columns of early
    rows are finfo.min and whole slices of a row hold nothing else; one row is masked
    entirely (a padded query), which torch gives 1/n everywhere."""
    x = torch.randn(rows, n, device=device, dtype=dtype) * 4
    lowest = torch.finfo(dtype).min
    col = torch.arange(n, device=device)
    visible = col[None, :] <= (torch.arange(rows, device=device)[:, None] * n) // rows
    x = torch.where(visible, x, torch.full_like(x, lowest))
    x[rows // 2] = lowest
    return x


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=[requires_cuda, pytest.mark.cuda])])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["float32", "bfloat16"])
@pytest.mark.parametrize("n", [128, 197, 4097, 20000, 65536])
def test_rows_masked_with_finfo_min_match_torch(n, dtype, device):
    # finfo.min · log2(e) overflows a float: the one-FFMA exponent gave +inf, then NaN,
    # for every slice holding only masked columns (HF Llama / GPT-2 through enable()).
    x = attention_masked_scores(16, n, dtype, device)
    expected = torch.softmax(x.double(), -1)
    assert expected[8].allclose(torch.full_like(expected[8], 1 / n))
    for variant in torch_memopt.variants("softmax", device):
        out = torch_memopt.softmax(x, -1, torch.float32, variant=variant)
        assert not out.isnan().any(), f"{variant}: NaN"
        assert rel_error(out, expected) < 2e-5, f"{variant}: {rel_error(out, expected):.2e}"


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=[requires_cuda, pytest.mark.cuda])])
@pytest.mark.parametrize("n", [197, 4097, 65536])
def test_exponentials_below_the_smallest_normal_float_flush_to_zero_only(n, device):
    # Scores 40 apart on average: most e^(x - m) fall below 2^-126 (x - m < -87.3), which
    # the CUDA exponential (ex2.approx.ftz) returns as 0 rather than subnormal. The error
    # that buys must stay under 2^-126 an element, and the rest must be exact to 1e-5.
    x = torch.randn(6, n, device=device) * 40
    expected = torch.softmax(x.double(), -1)
    assert (expected < 2.0 ** -126).float().mean() > 0.5  # the case is exercised
    for variant in torch_memopt.variants("softmax", device):
        out = torch_memopt.softmax(x, -1, variant=variant)
        assert (out >= 0).all(), variant
        # 2e-5 an element: (x - m)·log2(e) rounds twice, up to 8e-6 relative at x - m = -69
        assert ((out.double() - expected).abs() <= 2.0 ** -126 + 2e-5 * expected).all(), variant
        assert rel_error(out, expected) < 1e-5, f"{variant}: {rel_error(out, expected):.2e}"


@requires_cuda
@pytest.mark.cuda
def test_an_inner_dim_runs_on_every_variant():
    x = torch.randn(4, 300, 40, device="cuda")
    ref = torch.softmax(x.double(), 1)
    for variant in cuda_variants():
        assert rel_error(torch_memopt.softmax(x, 1, variant=variant), ref) < 1e-5, variant


@requires_cuda
@pytest.mark.cuda
def test_the_ladder_is_listed_in_order():
    ladder = ["auto", "naive", "warp_per_row", "block_smem", "online"]
    if torch.cuda.get_device_capability() == (9, 0):
        ladder.append("cluster")  # thread-block clusters, built for sm_90a
    assert cuda_variants() == ladder


@requires_cuda
@pytest.mark.cuda
def test_row_strided_input_on_every_rung():
    """x[:, :N] of a wider tensor: rows 2N + 8 apart, read in place (no copy)."""
    for n in (1000, 4096):
        x = torch.randn(9, 2 * n + 8, device="cuda", dtype=torch.bfloat16)[:, :n] * 4
        ref = torch.softmax(x.double(), -1)
        for variant in cuda_variants():
            out = torch_memopt.softmax(x, -1, variant=variant)
            assert out.is_contiguous() and rel_error(out, ref) < 1e-2, f"{variant} {n}"
