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
from cuda_kernels import kernels_run
from torch_memopt.testing import fuzz
from torch_memopt.bench.calls import relative_error

TOLERANCE = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1e-2}
# Up to a row an SM (132), online holds 16-bit rows of 16385-32768 columns as floats
# (1024 threads); 140 x 20000 as loaded (512 threads); 200 x 1000 and 150 x 4096 more
# rows than SMs at the narrower widths.
SHAPES = [(5, 33), (37, 197), (11, 500), (9, 1000), (7, 4096), (3, 20000), (2, 65536), (1, 262144),
          (200, 1000), (150, 4096), (140, 20000)]
DTYPES = [pytest.param(d, id=str(d)[6:]) for d in (torch.float32, torch.float16, torch.bfloat16)]


def cuda_variants():
    return torch_memopt.variants("softmax", "cuda") if torch.cuda.is_available() else []


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
                err = relative_error(out, ref)
                tol = TOLERANCE[out_dtype or dtype]
                if out.dtype != (out_dtype or dtype) or not err < tol:
                    failures.append(f"{variant} {rows}x{n} -> {out.dtype}: relative error {err:.2e}")
    assert not failures, "\n".join(failures)


@requires_cuda
@pytest.mark.cuda
@pytest.mark.parametrize("n", [1000, 4096, 32000, 65536, 2049, 50257])
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
        assert relative_error(out, expected) < 2e-5, f"{variant}: {relative_error(out, expected):.2e}"


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
        assert relative_error(out, expected) < 1e-5, f"{variant}: {relative_error(out, expected):.2e}"


@requires_cuda
@pytest.mark.cuda
def test_an_inner_dim_runs_on_every_variant():
    x = torch.randn(4, 300, 40, device="cuda")
    ref = torch.softmax(x.double(), 1)
    for variant in cuda_variants():
        assert relative_error(torch_memopt.softmax(x, 1, variant=variant), ref) < 1e-5, variant


@requires_cuda
@pytest.mark.cuda
def test_the_ladder_is_listed_in_order():
    ladder = ["auto", "naive", "warp_per_row", "block_smem", "online"]
    if torch.cuda.get_device_capability() == (9, 0):
        ladder.append("cluster")  # thread-block clusters, built for sm_90a
    if torch.cuda.get_device_capability() >= (8, 0):
        ladder.append("staged")  # cp.async
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
            assert out.is_contiguous() and relative_error(out, ref) < 1e-2, f"{variant} {n}"


# Widths off the 16-byte pack: online reads contiguous rows with their ends peeled
# off (16-byte packs between), other rows (and cluster all of them) one element a pack
# (softmax_narrow.cu, softmax_peeled.cu). 32001 and 50257 are vocabularies; 131073 is
# past 512-thread clusters' registers (1024-thread CTAs); 7 and 127 narrow rows.
NARROW_SHAPES = [(6, 7), (5, 127), (33, 2050), (17, 2049), (3, 32001), (8, 50257), (2, 131073)]


@requires_cuda
@pytest.mark.cuda
@pytest.mark.parametrize("dtype", DTYPES)
def test_widths_off_the_16_byte_pack_on_every_rung(dtype):
    """Against float64, contiguous and as a slice one element in (every row off a
    16-byte boundary, rows 3 elements longer than the width), 16-bit or float32 out;
    online and cluster must run their own kernels there, not hand the rows to
    block_smem, and online the peeled one (16-byte packs, kPeel) on contiguous rows."""
    failures = []
    for rows, n in NARROW_SHAPES:
        wide = torch.randn(rows, n + 3, device="cuda", dtype=dtype) * 4
        for name, x in (("contiguous", wide[:, :n].contiguous()), ("offset slice", wide[:, 1:n + 1])):
            ref = torch.softmax(x.double(), -1)
            for variant in cuda_variants():
                for out_dtype in (None, torch.float32):
                    out = torch_memopt.softmax(x, -1, out_dtype, variant=variant)
                    err = relative_error(out, ref)
                    if out.dtype != (out_dtype or dtype) or not err < TOLERANCE[out_dtype or dtype]:
                        failures.append(f"{variant} {rows}x{n} {name} -> {out.dtype}: {err:.2e}")
            for variant, kernel in (("online", "softmax_online_kernel"), ("cluster", "softmax_")):
                names = kernels_run(lambda: torch_memopt.softmax(x, -1, variant=variant))
                if len(names) != 1 or kernel not in names[0] or "block_smem" in names[0]:
                    failures.append(f"{variant} {rows}x{n} {name}: ran {names}")
                elif variant == "online" and (", 16, true>" in names[0]) != (name == "contiguous"):
                    failures.append(f"online {rows}x{n} {name}: peeled or not, wrongly: {names}")
    assert not failures, "\n".join(failures)


# online's 16-bit rows of 16385-32768 columns: 1024 threads of 4 float packs while
# every row has an SM of its own, else 512 threads of 8 packs as loaded.
ONLINE_FEW = "softmax_online_kernel<c10::BFloat16, c10::BFloat16, 1024, 4, false, 16"
ONLINE_MANY = "softmax_online_kernel<c10::BFloat16, c10::BFloat16, 512, 8, true, 16"


@requires_cuda
@pytest.mark.cuda
@pytest.mark.skipif(torch.cuda.is_available() and torch.cuda.get_device_capability() != (9, 0),
                    reason="thread-block clusters are built for sm_90a only")
@pytest.mark.parametrize("dtype, n, few_kernel, many_kernel", [
    (torch.bfloat16, 32000, ONLINE_FEW, ONLINE_MANY),
    (torch.bfloat16, 32001, ONLINE_FEW, ONLINE_MANY),  # peeled
    (torch.float32, 32000, "softmax_cluster_kernel", "softmax_online_kernel"),
    (torch.bfloat16, 50257, "softmax_cluster_kernel", "softmax_staged_kernel")])
def test_few_wide_rows_go_over_a_cluster(dtype, n, few_kernel, many_kernel):
    """8 rows of a vocabulary: auto splits each over a cluster of CTAs (8 blocks would
    leave the other SMs idle), except 16-bit rows online holds in one block (up to 32768
    columns), which ran faster a block a row; a full batch of them stays one block a
    row (online at 32000; past 32768 16-bit columns, where online needs 1024 threads a row,
    staged)."""
    few = torch.randn(8, n, device="cuda", dtype=dtype) * 4
    names = kernels_run(lambda: torch_memopt.softmax(few, -1))
    assert len(names) == 1 and few_kernel in names[0], names
    assert relative_error(torch_memopt.softmax(few, -1), torch.softmax(few.double(), -1)) < 1e-2
    many = torch.randn(512, n, device="cuda", dtype=dtype)
    names = kernels_run(lambda: torch_memopt.softmax(many, -1))
    assert len(names) == 1 and many_kernel in names[0], names
    assert relative_error(torch_memopt.softmax(many, -1), torch.softmax(many.double(), -1)) < 1e-2


# Attention rows: 4, 8 or 16 threads a row, several rows a warp (v04_online.cuh);
# row counts that leave the last block part empty.
SMALL_ROWS = [(1000, 128), (333, 256), (77, 512), (50, 64), (9, 8), (1001, 197)]


@requires_cuda
@pytest.mark.cuda
@pytest.mark.parametrize("dtype", DTYPES)
def test_attention_rows_several_a_warp(dtype):
    failures = []
    for rows, n in SMALL_ROWS:
        x = torch.randn(rows, n, device="cuda", dtype=dtype) * 4
        x[rows // 2, 3] = float("nan")
        x[rows // 3] = float("-inf")
        ref = torch.softmax(x.double(), -1)
        for variant in ("auto", "online"):
            out = torch_memopt.softmax(x, -1, variant=variant)
            if not torch.equal(out.isnan(), ref.isnan()):
                failures.append(f"{variant} {rows}x{n}: NaN pattern differs")
            finite = ref.isfinite()
            err = ((out.double()[finite] - ref[finite]).norm() / ref[finite].norm()).item()
            if not err < TOLERANCE[dtype]:
                failures.append(f"{variant} {rows}x{n}: relative error {err:.2e}")
            again = torch_memopt.softmax(x, -1, variant=variant)
            if not fuzz.same_values(out, again):
                failures.append(f"{variant} {rows}x{n}: a second run differs")
    assert not failures, "\n".join(failures)


@requires_cuda
@pytest.mark.cuda
def test_fp32_rows_off_the_pack_past_the_registers_take_the_peeled_online():
    """64 x 50257 fp32: past online's 32768 registers a row and off the 16-byte pack,
    fewer rows than SMs (from a row an SM, staged over 2 CTAs takes them:
    test_softmax_staged.py). The peeled online re-reads the rest of the row;
    block_smem, auto's choice before, ran 1.75x slower at 512 rows (H100, 2026-12-06)."""
    x = torch.randn(64, 50257, device="cuda") * 4
    names = kernels_run(lambda: torch_memopt.softmax(x, -1))
    assert len(names) == 1 and "softmax_online_kernel" in names[0] and ", 16, true>" in names[0], names
    assert relative_error(torch_memopt.softmax(x, -1), torch.softmax(x.double(), -1)) < 1e-5
