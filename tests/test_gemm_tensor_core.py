"""The tensor-core GEMM rungs (issue: mma, wgmma, gemv, and auto over them) in
bfloat16 and float16: every rung against a float64 reference on fresh random inputs,
in three layouts (gemm with row-major B, gemm with column-major B = w.t(), linear with
weight [N, K]), at tile-aligned, odd, TMA-breaking and decode shapes; the fused bias
and activation; outputs poisoned before the run; strided and misaligned operands;
empty dims; the dtype errors; and a race check (the same inputs, bit-identical
outputs). Relative Frobenius error < 1e-2 for bfloat16, < 5e-3 for float16 (the
output's rounding is ~2e-3 and ~3e-4; fp32 accumulation adds little at K <= 4097).

Expected to take well under a minute on an H200 (an estimate, not yet measured): the
bulk is the decode shapes (4096- and 11008-wide weights) and their float64 references.
"""
import math

import pytest
import torch
import torch.nn.functional as F

import torch_memopt
from conftest import requires_cuda
from torch_memopt.testing.references import ACTIVATIONS
from torch_memopt.bench.calls import relative_error

HALF_RUNGS = ["mma", "wgmma", "wgmma_split", "gemv", "splitk", "wgmma_streamk"]
RUNGS = [*HALF_RUNGS, "auto"]
DTYPES = [pytest.param(torch.bfloat16, id="bfloat16"), pytest.param(torch.float16, id="float16")]
TOLERANCE = {torch.bfloat16: 1e-2, torch.float16: 5e-3}
LAYOUTS = ["row_major_b", "col_major_b", "linear"]

# (M, N, K). wgmma reads an operand through TMA only when its rows are 16-byte
# aligned (row stride a multiple of 8 elements): K % 8 != 0 breaks A (and W), and in
# the row_major_b layout N % 8 != 0 breaks B, so those shapes take the aligned copy.
SHAPES = [
    (256, 512, 128),     # tile-aligned: whole tiles, no tails anywhere
    (1, 1, 1),           # one element
    (7, 127, 33),        # all tails, K below one k-tile
    (127, 33, 4097),     # a long K with a tail of one
    (4095, 257, 129),    # tails in M, N and K
    (1000, 4097, 72),    # N a tile plus one column
    (129, 255, 1001),    # K % 8 != 0: the TMA fallback copy
    (2048, 2048, 2048),  # large: the persistent grid walks many tiles per SM
]
# Decode shapes: LLaMA-7B projections at batch 1..64. 4096- and 11008-wide weights:
# run on the rungs meant for them only (mma is for M > 64).
DECODE_SHAPES = [(m, n, 4096) for n in (4096, 11008) for m in (1, 8, 16, 64)]
DECODE_RUNGS = {"wgmma", "wgmma_split", "gemv", "splitk", "wgmma_streamk", "auto"}


def cuda_test(fn):
    """Skipped with the conftest's reason where no GPU or no CUDA build is present."""
    return requires_cuda(pytest.mark.cuda(fn))


def require(rung):
    """Skip, with the reason, where this GPU cannot run ``rung``."""
    capability = torch.cuda.get_device_capability()
    if capability < (8, 0):
        pytest.skip(f"the tensor-core rungs need sm_80 or newer; this GPU is "
                    f"{capability[0]}.{capability[1]}")
    if rung in ("wgmma", "wgmma_split", "splitk", "wgmma_tf32", "wgmma_streamk") and capability != (9, 0):
        pytest.skip(f"{rung} is Hopper-only (compute capability 9.0); this GPU is "
                    f"{capability[0]}.{capability[1]}")


def randn(*shape, dtype, scale=1.0):
    values = torch.randn(*shape, device="cuda", dtype=dtype)
    return values.mul_(scale) if scale != 1.0 else values


def operands(layout, M, N, K, dtype):
    """(call(variant) -> out [M, N], reference() -> float64 [M, N]) on fresh inputs."""
    a = randn(M, K, dtype=dtype)
    if layout == "linear":
        weight = randn(N, K, dtype=dtype)
        return (lambda v: torch_memopt.linear(a, weight, variant=v),
                lambda: F.linear(a.double(), weight.double()))
    b = randn(K, N, dtype=dtype) if layout == "row_major_b" else randn(N, K, dtype=dtype).t()
    return (lambda v: torch_memopt.gemm(a, b, variant=v),
            lambda: torch.mm(a.double(), b.double()))


@cuda_test
def test_half_rungs_are_listed_for_this_gpu():
    capability = torch.cuda.get_device_capability()
    for op in ("gemm", "linear"):
        names = torch_memopt.variants(op, "cuda")
        assert names[0] == "auto", names
        half = [v for v in names if v in HALF_RUNGS]
        if capability == (9, 0):
            assert half == ["mma", "wgmma", "wgmma_split", "gemv", "splitk", "wgmma_streamk"], names
        elif capability >= (8, 0):
            assert half == ["mma", "gemv"], names
        else:
            assert not {"wgmma", "wgmma_split", "splitk", "wgmma_streamk"} & set(names), names


@cuda_test
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rung", RUNGS)
def test_rung_matches_float64(rung, dtype, layout):
    require(rung)
    shapes = SHAPES + (DECODE_SHAPES if rung in DECODE_RUNGS else [])
    failures = []
    for M, N, K in shapes:
        call, reference = operands(layout, M, N, K, dtype)
        out = call(rung)
        if out.shape != (M, N) or out.dtype != dtype or not out.is_contiguous():
            failures.append(f"{M}x{N}x{K}: got {tuple(out.shape)} {out.dtype}, "
                            f"contiguous={out.is_contiguous()}")
            continue
        err = relative_error(out, reference())
        if not err < TOLERANCE[dtype]:
            failures.append(f"{M}x{N}x{K}: relative error {err:.2e}")
    assert not failures, f"{rung} {dtype} {layout}:\n" + "\n".join(failures)


@cuda_test
@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rung", RUNGS)
def test_linear_bias_and_activation(rung, dtype, activation):
    """3-D input, fused bias and activation; K = 127 (the TMA fallback) and K = 256
    (TMA direct) with M = 135 and M = 8 (gemv's range). W scaled by 1/sqrt(K) so the
    bias is as large as the product and a bias added twice shows."""
    require(rung)
    for lead, K, N in [((3, 45), 127, 257), ((2, 4), 256, 384)]:
        x = randn(*lead, K, dtype=dtype)
        weight = randn(N, K, dtype=dtype, scale=K ** -0.5)
        bias = randn(N, dtype=dtype)
        out = torch_memopt.linear(x, weight, bias, activation=activation, variant=rung)
        assert out.shape == (*lead, N) and out.dtype == dtype
        ref = ACTIVATIONS[activation](F.linear(x.double(), weight.double(), bias.double()))
        err = relative_error(out, ref)
        assert err < TOLERANCE[dtype], f"{rung} {activation} {lead}x{K}->{N}: relative error {err:.2e}"


@cuda_test
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rung", sorted(DECODE_RUNGS))
def test_linear_epilogue_at_decode_shapes(rung, dtype):
    """A split-K reduction must add the bias and apply the activation once, after the
    whole sum: a bias per split or silu of a partial sum is far off the reference."""
    require(rung)
    for M, N in [(1, 11008), (16, 4096), (64, 4096)]:
        x = randn(M, 4096, dtype=dtype)
        weight = randn(N, 4096, dtype=dtype, scale=4096 ** -0.5)
        bias = randn(N, dtype=dtype)
        for activation in ("none", "silu"):
            out = torch_memopt.linear(x, weight, bias, activation=activation, variant=rung)
            ref = ACTIVATIONS[activation](F.linear(x.double(), weight.double(), bias.double()))
            err = relative_error(out, ref)
            assert err < TOLERANCE[dtype], f"{rung} M={M} N={N} {activation}: relative error {err:.2e}"


@cuda_test
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rung", RUNGS)
def test_every_output_written(rung, dtype, layout):
    """The allocator hands the op a NaN-filled block: unwritten tails show. N = 1001
    and 4099 leave a partial last tile; K = 136 and 1000 are TMA-legal in A."""
    require(rung)
    for M, N, K in [(1000, 1001, 136), (37, 4099, 1000)]:
        call, _ = operands(layout, M, N, K, dtype)
        block = torch.full((M * N,), float("nan"), device="cuda", dtype=dtype)
        del block
        out = call(rung)
        assert torch.isfinite(out).all(), f"{rung} {M}x{N}x{K}: unwritten (NaN) outputs"


def _strided_operands(M, N, K, dtype):
    """name -> (layout, a or x, b [K, N] or weight [N, K]). Offsets of one element break
    16-byte alignment and 8-element row strides (the launcher's aligned copy for wgmma);
    `padded rows` keeps both TMA-legal but not contiguous (strides read natively)."""
    def r(*shape):
        return randn(*shape, dtype=dtype)

    return {
        "a misaligned by one element": ("gemm", r(M + 1, K + 1)[1:, 1:], r(K, N)),
        "b misaligned by one element": ("gemm", r(M, K), r(K, N + 1)[:, 1:]),
        "b with no unit stride": ("gemm", r(M, K), r(2 * K, 2 * N)[::2, ::2]),
        "column-major a": ("gemm", r(K, M).t(), r(K, N)),
        "padded rows": ("gemm", r(M, K + 8)[:, :K], r(K, N + 8)[:, :N]),
        "linear, x and weight misaligned": ("linear", r(M + 1, K + 1)[1:, 1:], r(N, K + 1)[:, 1:]),
        "linear, weight with no unit stride": ("linear", r(M, K), r(2 * N, 2 * K)[::2, ::2]),
        "linear, padded rows": ("linear", r(M, K + 8)[:, :K], r(N, K + 8)[:, :K]),
    }


@cuda_test
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rung", RUNGS)
def test_strided_and_misaligned_operands(rung, dtype):
    require(rung)
    failures = []
    for M in (7, 129):  # gemv's range and above it
        for name, (layout, a, b) in _strided_operands(M, 136, 72, dtype).items():
            if layout == "gemm":
                out, ref = torch_memopt.gemm(a, b, variant=rung), torch.mm(a.double(), b.double())
            else:
                out, ref = torch_memopt.linear(a, b, variant=rung), F.linear(a.double(), b.double())
            err = relative_error(out, ref)
            if not err < TOLERANCE[dtype]:
                failures.append(f"M={M} {name}: relative error {err:.2e}")
    assert not failures, f"{rung} {dtype}:\n" + "\n".join(failures)


@cuda_test
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rung", RUNGS)
def test_k_1_with_strided_size_1_dims(rung, dtype):
    """K = 1 (issue 18's fuzz find): a transposed [M, 1] input (stride (1, M)), gemm's
    B [1, N] with a step of 2 and W [N, 1] transposed. torch calls a size-1 dim's
    stride anything; the kernels read a unit inner stride."""
    require(rung)
    failures = []
    for M in (7, 129):
        x = torch.randn(1, M, device="cuda", dtype=dtype).t()  # [M, 1], stride (1, M)
        b = torch.randn(1, 2 * 40, device="cuda", dtype=dtype)[:, ::2]  # [1, 40], stride (80, 2)
        w = torch.randn(1, 40, device="cuda", dtype=dtype).t()  # [40, 1], stride (1, 40)
        for name, out, ref in (
                ("gemm, stepped B", lambda: torch_memopt.gemm(x, b, variant=rung),
                 lambda: torch.mm(x.double(), b.double())),
                ("linear, transposed W", lambda: torch_memopt.linear(x, w, variant=rung),
                 lambda: F.linear(x.double(), w.double()))):
            err = relative_error(out(), ref())
            if not err < TOLERANCE[dtype]:
                failures.append(f"M={M} {name}: relative error {err:.2e}")
    assert not failures, f"{rung} {dtype}:\n" + "\n".join(failures)


@cuda_test
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rung", RUNGS)
def test_empty_dims(rung, dtype):
    """M = 0 or N = 0: an empty result; K = 0: every output is act(0 + bias), as F.linear gives."""
    require(rung)

    def r(*shape):
        return randn(*shape, dtype=dtype)

    for out, shape in [
        (torch_memopt.gemm(r(0, 64), r(64, 48), variant=rung), (0, 48)),
        (torch_memopt.gemm(r(5, 64), r(64, 0), variant=rung), (5, 0)),
        (torch_memopt.linear(r(2, 0, 64), r(48, 64), variant=rung), (2, 0, 48)),
        (torch_memopt.linear(r(5, 64), r(0, 64), r(0), variant=rung), (5, 0)),
    ]:
        assert out.shape == shape and out.dtype == dtype
    zeros = torch.zeros(5, 7, device="cuda", dtype=dtype)
    assert torch.equal(torch_memopt.gemm(r(5, 0), r(0, 7), variant=rung), zeros)
    bias = r(7)
    out = torch_memopt.linear(r(5, 0), r(7, 0), bias, activation="relu", variant=rung)
    assert torch.equal(out, F.relu(bias).expand(5, 7))
    out = torch_memopt.linear(r(5, 0), r(7, 0), bias, activation="silu", variant=rung)
    torch.testing.assert_close(out, F.silu(bias.float()).to(dtype).expand(5, 7))


@cuda_test
@pytest.mark.parametrize("rung", HALF_RUNGS)
def test_half_rungs_refuse_float32(rung):
    require(rung)
    a = torch.randn(8, 8, device="cuda")
    with pytest.raises(TypeError, match=rf"\b{rung}\b") as raised:
        torch_memopt.gemm(a, a, variant=rung)
    assert "float32" in str(raised.value)
    with pytest.raises(TypeError, match=rf"\b{rung}\b"):
        torch_memopt.linear(a, a, variant=rung)


@cuda_test
@pytest.mark.parametrize("dtype", DTYPES)
def test_fp32_rungs_refuse_half_dtypes(dtype):
    """Every rung this GPU lists besides naive and the half ones takes float32 only: the
    SIMT ladder and wgmma_tf32."""
    fp32_rungs = [v for v in torch_memopt.variants("gemm", "cuda")
                  if v not in ("auto", "naive", *HALF_RUNGS)]
    assert fp32_rungs
    a = randn(8, 8, dtype=dtype)
    for rung in fp32_rungs:
        with pytest.raises(TypeError, match=rf"\b{rung}\b") as raised:
            torch_memopt.gemm(a, a, variant=rung)
        assert str(dtype).removeprefix("torch.") in str(raised.value)


@cuda_test
@pytest.mark.parametrize("dtype", DTYPES)
def test_auto_takes_the_decode_rung_for_few_rows_and_the_wide_rung_above(dtype):
    """auto on compute capability 9.0 (N = 384, K = 2048: Hopper's gemv rule does not
    apply): splitk up to M = 32, wgmma from 64 rows (6 tiles, 32 k-tiles: the few-tiles
    splitk rules need more); elsewhere gemv up to M = 64, mma above. For linear, M counts
    every leading dim. Each pick is gemm_plan's, and, every rung deterministic, shows as
    a bit-identical output."""
    require("auto")
    hopper = torch.cuda.get_device_capability() == (9, 0)
    cases = [((1,), "splitk", "gemv"), ((32,), "splitk", "gemv"), ((4, 8), "splitk", "gemv"),
             ((64,), "wgmma", "gemv"), ((65,), "wgmma", "mma"), ((300,), "wgmma", "mma"),
             ((5, 13), "wgmma", "mma")]
    b, weight = randn(2048, 384, dtype=dtype), randn(384, 2048, dtype=dtype)
    for lead, on_hopper, elsewhere in cases:
        expected = on_hopper if hopper else elsewhere
        rows = math.prod(lead)
        for layout in ("linear", "gemm"):
            assert torch_memopt.gemm_plan(rows, 384, 2048, dtype, layout=layout)["variant"] == expected
        x = randn(*lead, 2048, dtype=dtype)
        assert torch.equal(torch_memopt.linear(x, weight),
                           torch_memopt.linear(x, weight, variant=expected)), f"linear {lead}"
        if len(lead) == 1:
            assert torch.equal(torch_memopt.gemm(x, b),
                               torch_memopt.gemm(x, b, variant=expected)), f"gemm {lead}"
    # K = 255: rows 510 bytes apart break TMA's 16-byte rule; the decode pick is gemv.
    x, weight = randn(8, 255, dtype=dtype), randn(384, 255, dtype=dtype)
    assert torch.equal(torch_memopt.linear(x, weight), torch_memopt.linear(x, weight, variant="gemv"))


DETERMINISM_SHAPES = {
    "wgmma": [(2048, 2048, 2048), (1000, 1001, 4104)],
    "mma": [(2048, 2048, 2048), (1000, 1001, 4104)],
    "gemv": [(1, 11008, 4096), (16, 4096, 4096), (64, 4096, 4096), (7, 1001, 4104)],
    "wgmma_split": [(128, 4096, 4096), (200, 1001, 4104), (256, 6144, 4096), (64, 4096, 14336)],
    "splitk": [(1, 11008, 4096), (16, 4096, 4096), (64, 4096, 4096), (7, 1001, 4104),
               (100, 1000, 4096), (250, 1024, 14336)],
    "wgmma_streamk": [(256, 12288, 4096), (128, 4096, 4096), (1000, 1001, 4104)],
}


@cuda_test
@pytest.mark.parametrize("layout", ["row_major_b", "linear"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rung", list(DETERMINISM_SHAPES))
def test_same_inputs_give_bit_identical_outputs(rung, dtype, layout):
    """A result that moves between runs on the same inputs is a race (a barrier missed
    in the pipeline, split-K partials summed in arrival order)."""
    require(rung)
    for M, N, K in DETERMINISM_SHAPES[rung]:
        call, _ = operands(layout, M, N, K, dtype)
        first = call(rung)
        for repeat in range(2):
            again = call(rung)
            moved = (again != first).sum().item()
            assert moved == 0, f"{rung} {M}x{N}x{K}: {moved} outputs moved on repeat {repeat + 1}"


def float64_and_repeat_failures(variant, layout, shapes, dtype, tolerance, activation):
    """For each (M, N, K) of `shapes`, `variant` on fresh inputs against float64: linear
    (weight [N, K]) with bias and `activation`, or gemm with a row-major b. Outputs are
    carved where the allocator held NaN, and a second run must be bit-identical. The
    failures, a line each."""
    failures = []
    for M, N, K in shapes:
        x = randn(M, K, dtype=dtype)
        w = randn(N, K, dtype=dtype, scale=K ** -0.5)
        bias = randn(N, dtype=dtype)
        if layout == "linear":
            def call():
                return torch_memopt.linear(x, w, bias, activation=activation, variant=variant)
            ref = ACTIVATIONS[activation](F.linear(x.double(), w.double(), bias.double()))
        else:
            b = w.t().contiguous()
            def call():
                return torch_memopt.gemm(x, b, variant=variant)
            ref = torch.mm(x.double(), b.double())
        block = torch.full((M * N,), float("nan"), device="cuda", dtype=dtype)
        del block
        out = call()
        err = relative_error(out, ref)
        if not err < tolerance:
            failures.append(f"{layout} {M}x{N}x{K}: relative error {err:.2e}")
        moved = (call() != out).sum().item()
        if moved:
            failures.append(f"{layout} {M}x{N}x{K}: {moved} outputs moved on a second run")
    return failures


@pytest.fixture
def wgmma_splits():
    """Sets wgmma_split's K splits for the test (torch_memopt._C._set_wgmma_splits) and
    restores the rule after it, pass or fail."""
    from torch_memopt import _C

    previous = _C._set_wgmma_splits(0)
    yield _C._set_wgmma_splits
    _C._set_wgmma_splits(previous)


# (M, N, K): one tile row of the Llama o-proj (the case the rung is for), tails in M,
# N and K with 16 k-tiles (every split count has work), K = 4104 (65 k-tiles: uneven
# splits), and K = 200 (4 k-tiles: 5-8 splits clamp to 4).
SPLIT_SHAPES = [(128, 4096, 4096), (200, 1001, 1000), (65, 257, 4104), (129, 520, 200)]


@cuda_test
@pytest.mark.parametrize("layout", ["row_major_b", "linear"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("splits", range(1, 9))
def test_wgmma_split_every_split_count(splits, dtype, layout, wgmma_splits):
    """Each split count 1-8 against float64, with bias and silu (added once, after the
    whole sum), on outputs the allocator hands over NaN-filled; and bit-identical on a
    second run (the partials are summed in rank order, never in arrival order)."""
    require("wgmma_split")
    wgmma_splits(splits)
    failures = float64_and_repeat_failures("wgmma_split", layout, SPLIT_SHAPES, dtype,
                                           TOLERANCE[dtype], "silu")
    assert not failures, f"wgmma_split, {splits} splits, {dtype}:\n" + "\n".join(failures)


@pytest.fixture
def wgmma_tile():
    """Sets the wgmma rung's output tile for the test (torch_memopt._C._set_wgmma_tile)
    and restores the rule after it, pass or fail."""
    from torch_memopt import _C

    yield _C._set_wgmma_tile
    _C._set_wgmma_tile(0, 0)


# Every tile the rung is built for (test_every_built_wgmma_tile_is_tested holds this list
# to torch_memopt._C._wgmma_tiles()).
WGMMA_TILES = [(128, 256), (128, 192), (128, 168), (128, 128), (64, 256), (64, 192), (128, 64),
               (64, 128), (64, 64)]
# The tiles built for linear's layout (weight [N, K]) in bfloat16 / float16 only
# (_C._wgmma_linear_only_tiles()): set for gemm's row-major b or for tf32 they run
# 128 x 192, so those cases below test that fallback, not the tile.
LINEAR_ONLY_TILES = [(128, 168)]
# (M, N, K): the Llama o-proj at 128 tokens (the case the narrow tiles are for), one
# row, tails in M, N and K (N = 1001: the epilogue from registers; 264: TMA stores with
# a partial last box), K = 4104 (65 k-tiles: the stage ring wraps unevenly), K = 40
# (one partial k-tile).
TILE_SHAPES = [(128, 4096, 4096), (1, 264, 520), (200, 1001, 1000), (65, 264, 4104),
               (129, 520, 40)]


@cuda_test
@pytest.mark.parametrize("layout", ["row_major_b", "linear"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("tile", WGMMA_TILES, ids=lambda t: f"{t[0]}x{t[1]}")
def test_wgmma_every_tile(tile, dtype, layout, wgmma_tile):
    """Each output tile of the wgmma rung against float64, with bias and gelu on the
    linear layout, on outputs the allocator hands over NaN-filled; bit-identical on a
    second run. A linear-only tile on row_major_b runs 128 x 192 (its fallback)."""
    require("wgmma")
    wgmma_tile(*tile)
    failures = float64_and_repeat_failures("wgmma", layout, TILE_SHAPES, dtype, TOLERANCE[dtype],
                                           "gelu")
    assert not failures, f"wgmma, tile {tile}, {dtype}:\n" + "\n".join(failures)


@cuda_test
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("tile", WGMMA_TILES, ids=lambda t: f"{t[0]}x{t[1]}")
def test_wgmma_every_tile_bias_off_alignment(tile, dtype, wgmma_tile):
    """The epilogue reads the bias as element pairs where its address allows (4-byte
    loads), one element at a time where not: a bias sliced one element into its storage
    (2-byte aligned) against float64, with the TMA-store epilogue (N = 264) and the one
    from registers (N = 1001, odd), and with a bias whose pairs start aligned."""
    require("wgmma")
    wgmma_tile(*tile)
    failures = []
    for M, N, K in [(129, 264, 200), (65, 1001, 136)]:
        x = randn(M, K, dtype=dtype)
        w = randn(N, K, dtype=dtype, scale=K ** -0.5)
        storage = randn(N + 2, dtype=dtype)
        for offset in (1, 2):
            bias = storage[offset:offset + N]
            out = torch_memopt.linear(x, w, bias, activation="silu", variant="wgmma")
            ref = F.silu(F.linear(x.double(), w.double(), bias.double()))
            err = relative_error(out, ref)
            if not err < TOLERANCE[dtype]:
                failures.append(f"{M}x{N}x{K}, bias at element {offset}: relative error {err:.2e}")
    assert not failures, f"wgmma, tile {tile}, {dtype}:\n" + "\n".join(failures)


# (M, N, K) with two or more tiles a CTA at the 256-column tiles (the bias through shared
# memory, two buffers a consumer taken in turn): 264 tiles of 128 x 256 (2 a CTA) with
# tails in M and N and 3 k-tiles, so that the epilogues come close together; BERT's
# up-projection (384 tiles of 128 x 256, 3 a CTA); N = 1001 (the epilogue from registers).
MANY_TILES_SHAPES = [(1000, 8200, 136), (4096, 3072, 768), (2000, 1001, 64)]


@cuda_test
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("tile", [(128, 256), (64, 256)], ids=lambda t: f"{t[0]}x{t[1]}")
def test_wgmma_bias_through_shared_memory_over_many_tiles(tile, dtype, wgmma_tile):
    """The tiles whose bias the epilogue reads from shared memory (stage_bias), with two
    or more tiles a CTA: a buffer refilled for a later tile while an epilogue still read
    it would show as a wrong or moving output; bias and gelu against float64."""
    require("wgmma")
    wgmma_tile(*tile)
    failures = float64_and_repeat_failures("wgmma", "linear", MANY_TILES_SHAPES, dtype,
                                           TOLERANCE[dtype], "gelu")
    assert not failures, f"wgmma, tile {tile}, {dtype}:\n" + "\n".join(failures)


# (M, N, K) that put stream-K's split through its cases (132 SMs): 96 tiles of 128 x 256,
# each cut into 2-3 runs; 448 tiles = 2 whole waves + 184 shared; 16 tiles of 64
# k-tiles in 8-9 runs each; 64 tiles of 3 k-tiles (192 iterations: runs of 1-2 that
# start and end mid-tile); one tile of one k-tile (one CTA); tails in M, N and K with
# the epilogue from registers (N = 1001); whole waves (264 tiles: nothing shared).
STREAMK_SHAPES = [(256, 12288, 4096), (512, 28672, 1024), (128, 4096, 4096), (4095, 257, 129),
                  (7, 127, 33), (1000, 1001, 4104), (1408, 6144, 256)]


@cuda_test
@pytest.mark.parametrize("layout", ["row_major_b", "linear"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("tile", [(128, 256), (128, 128)], ids=lambda t: f"{t[0]}x{t[1]}")
def test_wgmma_streamk_every_split(tile, dtype, layout, wgmma_tile):
    """wgmma_streamk at both its tiles against float64 (bias and gelu on the linear layout),
    on NaN-filled outputs, bit-identical on a second run: the fix-up adds the partials
    in a fixed order."""
    require("wgmma_streamk")
    wgmma_tile(*tile)
    failures = float64_and_repeat_failures("wgmma_streamk", layout, STREAMK_SHAPES, dtype,
                                           TOLERANCE[dtype], "gelu")
    assert not failures, f"wgmma_streamk, tile {tile}, {dtype}:\n" + "\n".join(failures)


def test_every_built_wgmma_tile_is_tested():
    """A tile added to gemm_plan.h's kWgmmaTiles fails here until WGMMA_TILES (and so the
    float64 tests above) cover it; likewise a tile built for linear's layout only."""
    from torch_memopt import _C

    assert sorted(_C._wgmma_tiles()) == sorted(WGMMA_TILES)
    assert sorted(_C._wgmma_linear_only_tiles()) == sorted(LINEAR_ONLY_TILES)


# (M, N, K) for the 128 x 168 tile, linear's weight [N, K]: 264 tiles at N = 22016 (132
# tile columns, 8 columns in the last: the shape it is for) with M = 2176, 17 tile rows,
# so a CTA takes 17 tiles; tails in M, N and K with N % 8 == 0 (TMA stores clipped inside
# the last 56-column box: N = 1000 = 5 x 168 + 160); N = 344 (2 x 168 + 8: the last
# tile's second and third boxes wholly past N); N = 1001 (the epilogue from registers,
# 21 column groups) with K = 4104 (65 k-tiles: the 4-stage ring wraps unevenly); one row
# and one whole tile; K = 40 (one partial k-tile).
TILE_168_SHAPES = [(2176, 22016, 136), (200, 1000, 1000), (129, 344, 40), (65, 1001, 4104),
                   (1, 168, 64)]


@cuda_test
@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_wgmma_128x168_on_linear(dtype, activation, wgmma_tile):
    """The 128 x 168 tile (linear's weight only) against float64 with bias and every
    activation, on NaN-filled outputs, bit-identical on a second run."""
    require("wgmma")
    wgmma_tile(128, 168)
    failures = float64_and_repeat_failures("wgmma", "linear", TILE_168_SHAPES, dtype,
                                           TOLERANCE[dtype], activation)
    assert not failures, f"wgmma 128 x 168, {dtype}, {activation}:\n" + "\n".join(failures)


@cuda_test
@pytest.mark.parametrize("dtype", [*DTYPES, pytest.param(torch.float32, id="tf32")])
def test_wgmma_128x168_forced_elsewhere_runs_128x192(dtype, wgmma_tile):
    """128 x 168 set for gemm's row-major b, or for tf32 on any layout, runs 128 x 192
    (gemm_plan.h's wgmma_tile_runs): bit-identical to that tile, never a 168-column
    kernel reading an operand it cannot."""
    variant = "wgmma_tf32" if dtype == torch.float32 else "wgmma"
    require(variant)
    M, N, K = 300, 1000, 200
    x = randn(M, K, dtype=dtype)
    b = randn(K, N, dtype=dtype, scale=K ** -0.5)
    w = randn(N, K, dtype=dtype, scale=K ** -0.5)
    calls = {"gemm, row-major b": lambda: torch_memopt.gemm(x, b, variant=variant)}
    if dtype == torch.float32:
        calls["linear, tf32"] = lambda: torch_memopt.linear(x, w, variant=variant)
    for name, call in calls.items():
        wgmma_tile(128, 192)
        expected = call()
        wgmma_tile(128, 168)
        assert torch.equal(call(), expected), name


def test_set_wgmma_tile_rejects_unknown_tiles():
    from torch_memopt import _C

    with pytest.raises(ValueError, match=r"expected one of \(0, 0\) \(the rule\), \(128, 256\)"):
        _C._set_wgmma_tile(96, 64)


@pytest.fixture
def wgmma_group_rows():
    """Sets the tile-rows of a group in the wgmma rung's tile order for the test
    (torch_memopt._C._set_wgmma_group_rows) and restores the rule after it."""
    from torch_memopt import _C

    previous = _C._set_wgmma_group_rows(0)
    yield _C._set_wgmma_group_rows
    _C._set_wgmma_group_rows(previous)


@cuda_test
@pytest.mark.parametrize("dtype", [*DTYPES, pytest.param(torch.float32, id="tf32")])
def test_wgmma_group_rows_move_no_output_bit(dtype, wgmma_group_rows, wgmma_tile):
    """The group size only reorders whole tiles over the persistent grid, so every size
    gives group 8's output bit for bit: 40 x 17 tiles of 128 x 256 (M = 5000 and N = 4300
    with tails, K = 328 with a partial k-tile) walked in groups of 1, 3, 13 and 64
    tile-rows (a last group cut short, one group of all of them), with a bias and gelu;
    group 8's own output against float64."""
    variant = "wgmma_tf32" if dtype == torch.float32 else "wgmma"
    require(variant)
    wgmma_tile(128, 256)
    M, N, K = 5000, 4300, 328
    x = randn(M, K, dtype=dtype)
    w = randn(N, K, dtype=dtype, scale=K ** -0.5)
    b = randn(N, dtype=dtype)

    def run(rows):
        wgmma_group_rows(rows)
        return torch_memopt.linear(x, w, b, activation="gelu", variant=variant)

    expected = run(8)
    ref = ACTIVATIONS["gelu"](F.linear(x.double(), w.double(), b.double()))
    err = float((expected.double() - ref).norm() / ref.norm())
    assert err < TOLERANCE.get(dtype, 1e-2), f"group 8: relative error {err:.2e}"
    for rows in (1, 3, 13, 64):
        assert torch.equal(run(rows), expected), f"group {rows} moved outputs"


def test_set_wgmma_group_rows_rejects_out_of_range():
    from torch_memopt import _C

    with pytest.raises(ValueError, match=r"expected 0 \(the rule\) to 64, got 65"):
        _C._set_wgmma_group_rows(65)
    with pytest.raises(ValueError, match=r"expected 0 \(the rule\) to 64, got -1"):
        _C._set_wgmma_group_rows(-1)


@cuda_test
@pytest.mark.parametrize("dtype", DTYPES)
def test_auto_follows_gemm_plan(dtype):
    """auto runs the rung gemm_plan names: wgmma with a tile that fills the SMs (Llama
    o-proj at 128 and 256 tokens: 64 x 64 and 128 x 64; 128 x 256 at 4096; Llama-2's
    gate_up at 256 tokens: 128 x 168, two whole waves), splitk where
    even 64 x 64 tiles fill under a quarter of them past 32 k-tiles (N = 1024, K = 4096 at
    128 tokens, and under half of them past 64 k-tiles at 256: N = 1024, K = 14336), gemv at
    decode rows of linear's weight from 24 columns an SM (1 and 16 tokens, N = 4096 / 6144)."""
    require("auto")
    hopper = torch.cuda.get_device_capability() == (9, 0)
    expected = {(128, 4096, 4096): ("wgmma", (64, 64)), (256, 4096, 4096): ("wgmma", (128, 64)),
                (4096, 4096, 4096): ("wgmma", (128, 256)),
                (256, 22016, 4096): ("wgmma", (128, 168)),
                (128, 1024, 4096): ("splitk", (0, 0)), (256, 1024, 14336): ("splitk", (0, 0)),
                (1, 4096, 4096): ("gemv", (0, 0)), (16, 6144, 4096): ("gemv", (0, 0))}
    for (M, N, K), (variant, tile) in expected.items():
        plan = torch_memopt.gemm_plan(M, N, K, dtype)
        if hopper:
            assert (plan["variant"], plan["tile"]) == (variant, tile), (M, N, K, plan)
        x, w = randn(M, K, dtype=dtype), randn(N, K, dtype=dtype)
        assert torch.equal(torch_memopt.linear(x, w), torch_memopt.linear(x, w, variant=plan["variant"]))


# tf32 keeps 10 of float32's 23 mantissa bits: a relative Frobenius error of a few
# 1e-4 at these K (torch.mm under allow_tf32 makes the same order).
TF32_TOLERANCE = 5e-3
# (M, N, K): the Llama o-proj at 128 tokens and one at 2048, a row, tails in M and N
# (N = 1001), K % 4 != 0 (rows TMA cannot read as they are: a padded copy), K = 20
# (one partial k-tile of 32).
TF32_SHAPES = [(128, 4096, 4096), (2048, 4096, 1024), (1, 264, 520), (200, 1001, 1000),
               (65, 264, 4103), (129, 520, 20)]


@cuda_test
@pytest.mark.parametrize("layout", ["row_major_b", "linear"])
@pytest.mark.parametrize("tile", WGMMA_TILES, ids=lambda t: f"{t[0]}x{t[1]}")
def test_wgmma_tf32_every_tile(tile, layout, wgmma_tile):
    """wgmma_tf32 against float64 on every output tile, with bias and silu on the
    linear layout, NaN-poisoned outputs, bit-identical on a second run."""
    require("wgmma_tf32")
    wgmma_tile(*tile)
    failures = float64_and_repeat_failures("wgmma_tf32", layout, TF32_SHAPES, torch.float32,
                                           TF32_TOLERANCE, "silu")
    assert not failures, f"wgmma_tf32, tile {tile}:\n" + "\n".join(failures)


@cuda_test
def test_wgmma_tf32_gemm_reads_a_row_sliced_b():
    """gemm's row-major b reaches tf32 wgmma as a transposed copy (transpose_fp32.cu):
    here b's rows lie 1030 floats apart (a slice 29 floats in), and K = 130, N = 1001
    leave partial transpose tiles both ways."""
    require("wgmma_tf32")
    x = randn(77, 130, dtype=torch.float32)
    b = randn(130, 1030, dtype=torch.float32, scale=130 ** -0.5)[:, 29:]
    out = torch_memopt.gemm(x, b, variant="wgmma_tf32")
    err = relative_error(out, torch.mm(x.double(), b.double()))
    assert err < TF32_TOLERANCE, f"relative error {err:.2e}"


@cuda_test
def test_wgmma_tf32_gemm_transposes_past_the_grid_height():
    """The transpose's grid holds at most 65535 tiles of 64 rows; its blocks stride
    over the rest. b [K, N] with K = 65535 * 64 + 3 rows (transposed copy: 48 MB).

    Entries in {-1, 0, 1}: tf32 holds them exactly and every partial sum is an integer
    far under 2^24, so the result is exact and a row of b the transpose skipped or wrote
    twice changes it. (With randn entries the first run on the GPU read a relative error
    of 1.2e-2 against 5e-3: 131071 k-tiles added in turn into one fp32 accumulator,
    whose rounding drifts with the number of adds; the transpose has no part in that.)"""
    require("wgmma_tf32")
    K = 65535 * 64 + 3
    x = torch.randint(-1, 2, (3, K), device="cuda").float()
    b = torch.randint(-1, 2, (K, 5), device="cuda").float()
    out = torch_memopt.gemm(x, b, variant="wgmma_tf32")
    ref = torch.mm(x.double(), b.double())
    assert ref.abs().max() > 0 and torch.equal(out.double(), ref), (out, ref)


@cuda_test
def test_auto_takes_tf32_only_when_allowed():
    """float32 auto: warptiled (full float32) by default; wgmma_tf32 on Hopper once
    torch.backends.cuda.matmul.allow_tf32 is set, as torch.mm then uses tf32 too."""
    require("auto")
    hopper = torch.cuda.get_device_capability() == (9, 0)
    x, w = randn(256, 512, dtype=torch.float32), randn(384, 512, dtype=torch.float32)
    previous = torch.backends.cuda.matmul.allow_tf32
    try:
        torch.backends.cuda.matmul.allow_tf32 = False
        assert torch_memopt.gemm_plan(256, 384, 512, torch.float32)["variant"] == "warptiled"
        assert torch.equal(torch_memopt.linear(x, w), torch_memopt.linear(x, w, variant="warptiled"))
        torch.backends.cuda.matmul.allow_tf32 = True
        plan = torch_memopt.gemm_plan(256, 384, 512, torch.float32)
        assert plan["variant"] == ("wgmma_tf32" if hopper else "warptiled"), plan
        assert torch.equal(torch_memopt.linear(x, w), torch_memopt.linear(x, w, variant=plan["variant"]))
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous


@cuda_test
@pytest.mark.parametrize("dtype", DTYPES)
def test_wgmma_tf32_refuses_half_dtypes(dtype):
    require("wgmma_tf32")
    a = randn(8, 8, dtype=dtype)
    with pytest.raises(TypeError, match=r"wgmma_tf32' is a rung of the fp32 ladder and takes float32 \(read as tf32"):
        torch_memopt.gemm(a, a, variant="wgmma_tf32")
