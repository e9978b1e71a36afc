"""The LayerNorm / RMSNorm ladder rungs on CUDA (issue 5): every rung at the widths
that take each of its paths, against a float64 reference, plus NaN propagation.

Widths: 33 (no whole 16-byte pack: vectorized reads 2- or 4-byte packs), 768 and 1000 (narrow,
several rows a block in vectorized), 4096, 20000 (past warp_per_row's registers and
inside block_smem's shared-memory cache for 16-bit types, past it for fp32),
65536 (past every single-block cache: the re-read paths, and the cluster rung's
case on Hopper), 262144 (past the cluster rung's registers: its re-read path).
Row counts that are not multiples of the rows a block takes.
"""

import pytest
import torch
import torch.nn.functional as F

import torch_memopt
from conftest import requires_cuda
from cuda_kernels import kernels_run
from torch_memopt.bench.calls import relative_error

TOLERANCE = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1e-2}
SHAPES = [(5, 33), (37, 768), (9, 1000), (7, 4096), (3, 20000), (2, 65536), (1, 262144)]
DTYPES = [pytest.param(d, id=str(d)[6:]) for d in (torch.float32, torch.float16, torch.bfloat16)]


def cuda_variants(op):
    return [v for v in torch_memopt.variants(op, "cuda")] if torch.cuda.is_available() else []


def reference(op, x, weight, bias, eps):
    if op == "layer_norm":
        return F.layer_norm(x.double(), x.shape[-1:], weight.double(), bias.double(), eps)
    return F.rms_norm(x.double(), x.shape[-1:], weight.double(), eps)


def call(op, x, weight, bias, eps, variant):
    if op == "layer_norm":
        return torch_memopt.layer_norm(x, [x.shape[-1]], weight, bias, eps, variant=variant)
    return torch_memopt.rms_norm(x, [x.shape[-1]], weight, eps, variant=variant)


@requires_cuda
@pytest.mark.cuda
@pytest.mark.parametrize("fp32_params", [False, True], ids=["params-in-dtype", "fp32-params"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["layer_norm", "rms_norm"])
def test_every_rung_at_every_path(op, dtype, fp32_params, norm_param_stage):
    failures = []
    param_dtype = torch.float32 if fp32_params else dtype
    for rows, n in SHAPES:
        # A mean far from zero: a one-pass E[x^2] - mean^2 variance would lose it.
        x = torch.randn(rows, n, device="cuda", dtype=dtype) + 3
        weight = torch.randn(n, device="cuda", dtype=param_dtype)
        bias = torch.randn(n, device="cuda", dtype=param_dtype)
        ref = reference(op, x, weight, bias, 1e-5)
        for variant in cuda_variants(op):
            out = call(op, x, weight, bias, 1e-5, variant)
            err = relative_error(out, ref)
            if out.dtype != dtype or not err < TOLERANCE[dtype]:
                failures.append(f"{variant} {rows}x{n}: {out.dtype}, relative error {err:.2e}")
    assert not failures, "\n".join(failures)


# The launcher's rule for the early instance (norm_vectorized_launch.cuh's param_stage). LayerNorm
# stages at every width (below); RMSNorm, up to
# 256 threads a row (8192 16-bit columns, 4096 fp32), loads the parameters into registers
# with the row, at any alignment, pack width or peel, for grids of one wave of that instance
# (its blocks an SM by its registers: 1-4 on the H200): 1, 60 and 100 rows of 8192 / 4096
# bf16 (a block a row), 300 of 4096; 264 and 265 rows of 768 (4 rows a block: 66 and 67
# blocks); the narrow packs (4100, 2050 with the peel off, 4097 in 2-byte packs), the peeled
# rows (4100, 2050, 772 with heads differing row to row) and parameters off 16 bytes
# (param_offset) alike. 4100 rows of 8192, 5003 of 768 are past the wave (read late). At 512
# threads a row, unpeeled rows whose parameters are as wide as the row's elements (fp32
# 4097-8192, 16-bit 8193-16384) load them into registers too, within one wave (1 block an SM:
# 1, 131, 132 rows; 133 and 300 past it). Wider rows, 16-bit rows of fp32 parameters at 512
# threads (bf16 x fp32 16384) and the peeled ones (fp32 6150), stage within half a
# wave (66 blocks), within 32 KB a block, where the parameters start 16-byte aligned and the
# part staged is whole 16-byte chunks, and prefetch towards L2 otherwise (layer_norm's
# bf16 x fp32 16384: 128 KB; peeled rows, parameters off 16 bytes).
# (dtype, param dtype, rows, N, param_offset, peel mode: 1 the rule, 0 narrow packs,
# 2 peeled)
STAGE_CASES = [
    (torch.bfloat16, torch.bfloat16, 60, 8192, 0, 1),
    (torch.bfloat16, torch.bfloat16, 1, 4096, 0, 1),
    (torch.bfloat16, torch.bfloat16, 100, 8192, 0, 1),
    (torch.bfloat16, torch.bfloat16, 300, 4096, 0, 1),
    (torch.bfloat16, torch.bfloat16, 4100, 8192, 0, 1),
    (torch.bfloat16, torch.bfloat16, 264, 768, 0, 1),
    (torch.bfloat16, torch.bfloat16, 265, 768, 0, 1),
    (torch.bfloat16, torch.bfloat16, 5003, 768, 0, 1),
    (torch.float32, torch.float32, 3, 8192, 0, 1),
    (torch.float32, torch.float32, 1, 6144, 0, 1),
    (torch.float32, torch.float32, 132, 8192, 0, 1),
    (torch.float32, torch.float32, 133, 8192, 0, 1),
    (torch.bfloat16, torch.bfloat16, 131, 16384, 0, 1),
    (torch.float16, torch.float16, 300, 12288, 0, 1),
    (torch.bfloat16, torch.float32, 3, 16384, 0, 1),
    (torch.float32, torch.float32, 2, 6150, 0, 2),
    (torch.float16, torch.float16, 131, 2048, 0, 1),
    (torch.bfloat16, torch.bfloat16, 6, 4100, 0, 1),
    (torch.bfloat16, torch.float32, 3, 4100, 0, 1),
    (torch.float32, torch.float32, 5, 2050, 0, 1),
    (torch.bfloat16, torch.bfloat16, 9, 772, 0, 1),
    (torch.bfloat16, torch.bfloat16, 1, 2050, 0, 0),
    (torch.float16, torch.float16, 7, 4097, 0, 0),
    (torch.bfloat16, torch.bfloat16, 2, 4096, 1, 1),
    (torch.float32, torch.float32, 5, 4100, 1, 1),
    # grids past one wave (rms_norm keeps its weight in registers there)
    (torch.bfloat16, torch.bfloat16, 5000, 4096, 0, 1),
    (torch.float32, torch.float32, 4500, 768, 1, 1),
    (torch.bfloat16, torch.bfloat16, 3000, 4100, 0, 1),
    (torch.float32, torch.float32, 900, 8192, 0, 1),
    # peeled rows forced
    (torch.bfloat16, torch.bfloat16, 1, 2050, 0, 2),
    (torch.float16, torch.float32, 3, 4100, 3, 2),
    (torch.bfloat16, torch.bfloat16, 200, 2050, 0, 2),
]


@requires_cuda
@pytest.mark.cuda
@pytest.mark.parametrize("op", ["layer_norm", "rms_norm"])
def test_early_parameters_match_the_ones_read_late(op):
    """Fetched early (into registers, staged, or prefetched where the kernel cannot stage),
    prefetched or read after the reductions, the parameters give the same bits, at row
    counts on both sides of the early rules, every pack width, peeled rows and parameters
    off 16 bytes, and match float64."""
    from torch_memopt.testing.switches import EARLY, LATE, PREFETCH, norm_switches

    for dtype, param_dtype, rows, n, offset, peel in STAGE_CASES:
        label = f"{op} {dtype} x {param_dtype} {rows}x{n} params +{offset} peel mode {peel}"
        x = torch.randn(rows, n, device="cuda", dtype=dtype) + 3
        weight = torch.randn(n + offset, device="cuda", dtype=param_dtype)[offset:]
        bias = torch.randn(n + offset, device="cuda", dtype=param_dtype)[offset:]
        outputs = {}
        for mode in (LATE, EARLY, PREFETCH):
            with norm_switches(param_stage=mode, peel=peel):
                outputs[mode] = call(op, x, weight, bias, 1e-5, "vectorized")
        assert torch.equal(outputs[EARLY], outputs[LATE]), f"{label}: early and late differ"
        assert torch.equal(outputs[PREFETCH], outputs[LATE]), f"{label}: prefetched and late differ"
        err = relative_error(outputs[EARLY], reference(op, x, weight, bias, 1e-5))
        assert err < TOLERANCE[dtype], f"{label}: relative error {err:.2e}"


@requires_cuda
@pytest.mark.cuda
@pytest.mark.parametrize("op", ["layer_norm", "rms_norm"])
def test_nan_and_inf_rows_propagate_like_torch(op):
    n = 4096
    x = torch.randn(4, n, device="cuda", dtype=torch.bfloat16)
    x[1, 17] = float("nan")
    x[2, 5] = float("inf")
    weight = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    bias = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    expected = (F.layer_norm(x.float(), [n], weight.float(), bias.float()) if op == "layer_norm"
                else F.rms_norm(x.float(), [n], weight.float(), 1e-5))
    for variant in cuda_variants(op):
        out = call(op, x, weight, bias, 1e-5, variant).float()
        assert torch.equal(out.isnan(), expected.isnan()), f"{variant}: NaN pattern differs"
        finite = expected.isfinite()
        assert torch.allclose(out[finite], expected[finite], rtol=2e-2, atol=2e-2), variant


@requires_cuda
@pytest.mark.cuda
def test_auto_and_the_ladder_are_listed_in_order():
    ladder = ["auto", "naive", "warp_per_row", "block_smem", "vectorized"]
    if torch.cuda.get_device_capability() == (9, 0):
        ladder.append("cluster")  # thread-block clusters, built for sm_90a
    for op in ("layer_norm", "rms_norm"):
        assert cuda_variants(op) == ladder


@requires_cuda
@pytest.mark.cuda
@pytest.mark.parametrize("op", ["layer_norm", "rms_norm"])
def test_row_strided_input_on_every_rung(op):
    """x[:, :N] of a wider tensor: rows 2N + 8 apart, read in place (no copy)."""
    for n in (768, 4096):
        wide = torch.randn(9, 2 * n + 8, device="cuda", dtype=torch.bfloat16)
        x = wide[:, :n]
        weight = torch.randn(n, device="cuda", dtype=torch.bfloat16)
        bias = torch.randn(n, device="cuda", dtype=torch.bfloat16)
        ref = reference(op, x, weight, bias, 1e-5)
        for variant in cuda_variants(op):
            out = call(op, x, weight, bias, 1e-5, variant)
            assert out.is_contiguous() and relative_error(out, ref) < 1e-2, f"{variant} {n}"


# Widths off the 16-byte pack and the pack vectorized reads them with instead
# (norm_narrow_packs.cu): 2050 takes 4-byte packs in 16-bit types and 8-byte ones in
# float32; 4100 8-byte packs in 16-bit types (16 in float32); odd widths one element.
# 70002 is past what 1024 threads keep in registers: the re-read path.
NARROW_SHAPES = [(33, 2050), (5, 4100), (9, 2049), (3, 7), (4, 1), (6, 127), (2, 4097),
                 (1, 70002), (130, 250)]


def vectorized_ran(run) -> bool:
    """Whether `run` launched the vectorized kernel (and not the fallback's rung)."""
    return any("norm_vectorized_kernel" in name for name in kernels_run(run))


@requires_cuda
@pytest.mark.cuda
@pytest.mark.parametrize("fp32_params", [False, True], ids=["params-in-dtype", "fp32-params"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["layer_norm", "rms_norm"])
def test_vectorized_reads_widths_off_the_16_byte_pack_with_narrower_packs(op, dtype, fp32_params,
                                                                         norm_peel):
    """Against float64, every width of NARROW_SHAPES, contiguous and as a slice starting
    one element in (every row 2 or 4 bytes off a 16-byte boundary: an odd row stride);
    vectorized must run its own kernel there, not hand the rows to block_smem. Peeled
    (contiguous rows of an odd width: each row's head a different length) and in narrow
    packs (the offset slice always: its rows sit off 16 bytes unlike the output's)."""
    failures = []
    param_dtype = torch.float32 if fp32_params else dtype
    for rows, n in NARROW_SHAPES:
        wide = torch.randn(rows, n + 3, device="cuda", dtype=dtype) + 3
        weight = torch.randn(n, device="cuda", dtype=param_dtype)
        bias = torch.randn(n, device="cuda", dtype=param_dtype)
        for name, x in (("contiguous", wide[:, :n].contiguous()), ("offset slice", wide[:, 1:n + 1])):
            ref = reference(op, x, weight, bias, 1e-5)
            out = call(op, x, weight, bias, 1e-5, "vectorized")
            err = relative_error(out, ref)
            if out.dtype != dtype or out.shape != x.shape or not err < TOLERANCE[dtype]:
                failures.append(f"{rows}x{n} {name}: {out.dtype}, relative error {err:.2e}")
            if not vectorized_ran(lambda: call(op, x, weight, bias, 1e-5, "vectorized")):
                failures.append(f"{rows}x{n} {name}: the vectorized kernel did not run")
            again = call(op, x, weight, bias, 1e-5, "vectorized")
            if not torch.equal(again, out):
                failures.append(f"{rows}x{n} {name}: a second run differs")
    assert not failures, "\n".join(failures)


@requires_cuda
@pytest.mark.cuda
@pytest.mark.parametrize("variant", ["vectorized", "auto"])
def test_narrow_packs_keep_nan_and_inf_rows(variant):
    """A NaN or inf in one row of a 2050-wide bf16 input (4-byte packs) poisons that row
    only. The reference is the definition in float64, x * rsqrt(mean(x^2) + eps) * w: an
    inf makes the row's rsqrt 0, so the inf becomes NaN and every finite element 0.
    (torch's own fused CUDA kernel is not a reference here: at this width it returns NaN
    for the whole row, at 4096 the definition's zeros.)"""
    n = 2050
    x = torch.randn(4, n, device="cuda", dtype=torch.bfloat16)
    x[1, 2049] = float("nan")  # the last element: the last pack's second half
    x[2, 0] = float("inf")
    weight = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    out = torch_memopt.rms_norm(x, [n], weight, 1e-5, variant=variant).double()
    xd = x.double()
    expected = xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + 1e-5) * weight.double()
    assert torch.equal(out.isnan(), expected.isnan())
    assert out[1].isnan().all() and out[2, 0].isnan() and not out[2, 1:].isnan().any()
    finite = expected.isfinite()
    assert torch.allclose(out[finite], expected[finite], rtol=2e-2, atol=2e-2)


@requires_cuda
@pytest.mark.cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["float32", "bfloat16"])
@pytest.mark.parametrize("op", ["layer_norm", "rms_norm"])
def test_auto_takes_the_narrow_packs_off_the_16_byte_pack(op, dtype):
    """auto at widths off the 16-byte pack (and on offset slices) runs the vectorized
    kernel with narrower packs, not block_smem or warp_per_row, and matches float64."""
    failures = []
    for rows, n in [(33, 2050), (5, 4100), (9, 2049), (6, 127), (1, 70002)]:
        wide = torch.randn(rows, n + 3, device="cuda", dtype=dtype) + 3
        weight = torch.randn(n, device="cuda", dtype=dtype)
        bias = torch.randn(n, device="cuda", dtype=dtype)
        for name, x in (("contiguous", wide[:, :n].contiguous()), ("offset slice", wide[:, 1:n + 1])):
            out = call(op, x, weight, bias, 1e-5, "auto")
            err = relative_error(out, reference(op, x, weight, bias, 1e-5))
            if not err < TOLERANCE[dtype]:
                failures.append(f"{rows}x{n} {name}: relative error {err:.2e}")
            if not vectorized_ran(lambda: call(op, x, weight, bias, 1e-5, "auto")):
                failures.append(f"{rows}x{n} {name}: auto did not take the vectorized kernel")
    assert not failures, "\n".join(failures)


@requires_cuda
@pytest.mark.cuda
def test_small_grids_take_the_early_instance():
    """The launcher's rule as the profiler sees it: one row and 200 rows of 4096 bf16 (128
    threads a row; 200 blocks are past half a wave, within one wave of the early instance at
    2+ blocks an SM) run rms_norm's early instance (kEarly, the kernel's last template
    argument), and so do 20000 rows (rms_norm's weight stays in registers at any grid up to
    128 threads a row), but not 20000 rows of 8192 (256 threads) nor layer_norm's 20000
    rows; without a weight, read late, or prefetched (which these instances never do) the
    late one. layer_norm keeps the one-wave rule at up to 256 threads a row; wider (16384
    bf16, 512 threads) it stages or prefetches its parameters, within half a wave only: one
    row early, 200 rows late."""
    from torch_memopt.testing.switches import EARLY, LATE, PREFETCH, norm_switches

    def instance(rows, weight=True, mode=EARLY, op="rms_norm", n=4096):
        x = torch.randn(rows, n, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, device="cuda", dtype=torch.bfloat16) if weight else None
        b = torch.randn(n, device="cuda", dtype=torch.bfloat16) if weight else None
        run = (lambda: torch_memopt.rms_norm(x, [n], w, 1e-6)) if op == "rms_norm" else (
            lambda: torch_memopt.layer_norm(x, [n], w, b, 1e-5))
        with norm_switches(param_stage=mode):
            (name,) = kernels_run(run)
        assert "norm_vectorized_kernel" in name, name
        return name.split(">")[0].rsplit(",", 1)[-1].strip()

    assert instance(1) == "true" and instance(200) == "true"
    assert instance(20000) == "true"
    assert instance(20000, n=8192) == "false" and instance(20000, op="layer_norm") == "false"
    assert instance(1, weight=False) == "false"
    assert instance(1, mode=LATE) == "false" and instance(1, mode=PREFETCH) == "false"
    assert instance(1, op="layer_norm") == "true" and instance(200, op="layer_norm") == "true"
    assert instance(20000, op="layer_norm") == "false"
    wide = {"op": "layer_norm", "n": 16384}
    assert instance(1, **wide) == "true" and instance(200, **wide) == "false"
