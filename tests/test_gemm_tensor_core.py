"""The tensor-core GEMM rungs (issue: mma, wgmma, gemv, and auto over them) in
bfloat16 and float16: every rung against a float64 reference on fresh random inputs,
in three layouts (gemm with row-major B, gemm with column-major B = w.t(), linear with
weight [N, K]), at tile-aligned, odd, TMA-breaking and decode shapes; the fused bias
and activation; outputs poisoned before the run; strided and misaligned operands;
empty dims; the dtype errors; and a race check (the same inputs, bit-identical
outputs). Relative Frobenius error < 1e-2 for bfloat16, < 5e-3 for float16 (the
output's rounding is ~2e-3 and ~3e-4; fp32 accumulation adds little at K <= 4097).

The last section runs on the CPU: the pure parts of benchmarks/tc_gemm.py (argument
parsing, the case list and its targets, the records of one case measured through a
fake backend, PASS / MISS and the table) and the no-GPU exits of both scripts.

Expected to take well under a minute on an H200 (an estimate, not yet measured): the
bulk is the decode shapes (4096- and 11008-wide weights) and their float64 references.
"""
import math
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import torch_memopt
from conftest import HAS_CUDA, requires_cuda

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from tc_gemm import backend as tc_backend  # noqa: E402
from tc_gemm import cases as tc_cases  # noqa: E402
from tc_gemm import measure as tc_measure  # noqa: E402
from tc_gemm import report as tc_report  # noqa: E402

HALF_RUNGS = ["mma", "wgmma", "gemv", "splitk"]
RUNGS = [*HALF_RUNGS, "auto"]
DTYPES = [pytest.param(torch.bfloat16, id="bfloat16"), pytest.param(torch.float16, id="float16")]
TOLERANCE = {torch.bfloat16: 1e-2, torch.float16: 5e-3}
LAYOUTS = ["row_major_b", "col_major_b", "linear"]
ACTIVATIONS = {
    "none": lambda t: t,
    "relu": F.relu,
    "gelu": F.gelu,
    "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"),
    "silu": F.silu,
}

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
DECODE_RUNGS = {"wgmma", "gemv", "splitk", "auto"}


def cuda_test(fn):
    """Skipped with the conftest's reason where no GPU or no CUDA build is present."""
    return requires_cuda(pytest.mark.cuda(fn))


def require(rung):
    """Skip, with the reason, where this GPU cannot run ``rung``."""
    capability = torch.cuda.get_device_capability()
    if capability < (8, 0):
        pytest.skip(f"the tensor-core rungs need sm_80 or newer; this GPU is "
                    f"{capability[0]}.{capability[1]}")
    if rung in ("wgmma", "splitk") and capability != (9, 0):
        pytest.skip(f"{rung} is Hopper-only (compute capability 9.0); this GPU is "
                    f"{capability[0]}.{capability[1]}")


def randn(*shape, dtype, scale=1.0):
    values = torch.randn(*shape, device="cuda", dtype=dtype)
    return values.mul_(scale) if scale != 1.0 else values


def rel_error(out, ref):
    """Relative Frobenius error in float64 (nan for a non-finite output: fails any `<`)."""
    return (torch.linalg.vector_norm(out.double() - ref) / torch.linalg.vector_norm(ref)).item()


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
            assert half == ["mma", "wgmma", "gemv", "splitk"], names
        elif capability >= (8, 0):
            assert half == ["mma", "gemv"], names
        else:
            assert "wgmma" not in names and "splitk" not in names, names


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
        err = rel_error(out, reference())
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
        err = rel_error(out, ref)
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
            err = rel_error(out, ref)
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
            err = rel_error(out, ref)
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
    """Every rung this GPU lists besides naive and the half ones is an fp32 SIMT rung."""
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
def test_auto_takes_the_decode_rung_up_to_m_64_and_the_wide_rung_above(dtype):
    """auto at M <= 64: splitk on compute capability 9.0 when TMA reads the operands as
    they are, else gemv; above: wgmma on 9.0, mma elsewhere. For linear, M counts every
    leading dim. Each rung is deterministic (below), so the pick shows as a bit-identical
    output."""
    require("auto")
    hopper = torch.cuda.get_device_capability() == (9, 0)
    wide = "wgmma" if hopper else "mma"
    skinny = "splitk" if hopper else "gemv"
    b, weight = randn(256, 384, dtype=dtype), randn(384, 256, dtype=dtype)
    for lead, expected in [((1,), skinny), ((64,), skinny), ((4, 16), skinny),
                           ((65,), wide), ((300,), wide), ((5, 13), wide)]:
        x = randn(*lead, 256, dtype=dtype)
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
    "splitk": [(1, 11008, 4096), (16, 4096, 4096), (64, 4096, 4096), (7, 1001, 4104),
               (100, 1000, 4096)],
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


# --- benchmarks/tc_gemm.py: the pure parts, on the CPU -------------------------------

def _script(name):
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"{name}_script", ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_defaults_quick_and_dtypes():
    script = _script("tc_gemm")
    args = script.parse_args([])
    assert args.cases == tc_cases.FULL_CASES and not args.quick
    assert args.dtypes == ("bfloat16", "float16")
    assert args.out == ROOT / "benchmarks" / "results" / "tc_gemm_h200.json"
    quick = script.parse_args(["--quick", "--dtypes", "fp16", "--out", "x.json"])
    assert [(c.M, c.N, c.K, c.layout) for c in quick.cases] == [
        (4096, 4096, 4096, "gemm"), (4095, 4095, 4095, "gemm"),
        (1, 4096, 4096, "linear"), (1, 11008, 4096, "linear")]
    assert quick.dtypes == ("float16",) and quick.out == Path("x.json")
    assert script.parse_args(["--dtypes", "bfloat16, fp16,bf16"]).dtypes == ("bfloat16", "float16")


def test_cli_refuses_an_unknown_dtype(capsys):
    with pytest.raises(SystemExit):
        _script("tc_gemm").parse_args(["--dtypes", "fp8"])
    assert "--dtypes" in capsys.readouterr().err
    with pytest.raises(ValueError, match="expected dtypes among bf16, fp16.*got 'fp8'"):
        tc_cases.parse_dtypes("bf16,fp8")


def test_full_case_list_and_targets_are_the_issues():
    by_group = {}
    for case in tc_cases.FULL_CASES:
        by_group.setdefault(case.group, []).append(case)
    assert [(c.M, c.N, c.K, c.layout, c.bias) for c in by_group["square"]] == [
        (4096, 4096, 4096, "gemm", False), (8192, 8192, 8192, "gemm", False)]
    assert [(c.M, c.N, c.K, c.layout, c.bias) for c in by_group["linear_bias"]] == [
        (8192, 4096, 4096, "linear", True), (8192, 11008, 4096, "linear", True)]
    assert [(c.M, c.N, c.K, c.layout) for c in by_group["odd"]] == [
        (4095, 4095, 4095, "gemm"), (4097, 4096, 4100, "gemm")]
    assert sorted((c.M, c.N, c.K) for c in by_group["skinny"]) == sorted(
        (m, n, 4096) for m in (1, 8, 16, 64) for n in (4096, 11008))
    assert all(c.layout == "linear" and not c.bias for c in by_group["skinny"])
    targets = {c: c.target for c in tc_cases.FULL_CASES}
    assert {t.ratio for c, t in targets.items() if c.group == "square"} == {1.0}
    assert {t.ratio for c, t in targets.items() if c.group == "linear_bias"} == {0.95}
    assert {t.ratio for c, t in targets.items() if c.group == "odd"} == {3.0}
    assert {(c.M, t.ratio, t.pct_copy) for c, t in targets.items() if c.group == "skinny"} == {
        (1, 1.3, 80.0), (8, 1.3, None), (16, 1.3, None), (64, 1.3, None)}


def test_case_formulas():
    case = tc_cases.Case("linear_bias", "linear", 8192, 11008, 4096, bias=True)
    assert case.flop == 2 * 8192 * 11008 * 4096
    assert case.weight_bytes == 2 * 11008 * 4096
    assert case.input_bytes == 2 * (8192 * 4096 + 11008 * 4096 + 11008)
    assert (case.shape_label(), case.layout_label()) == ("8192×11008×4096", "linear+bias")
    assert tc_cases.Case("odd", "gemm", 4095, 4095, 4095).shape_label() == "4095³"
    with pytest.raises(ValueError, match="only the linear layout takes a bias"):
        tc_cases.Case("square", "gemm", 8, 8, 8, bias=True)


def test_plan_takes_the_rungs_that_apply_and_skips_the_missing_ones():
    available = {"gemm": ["auto", "naive", "mma", "wgmma"], "linear": ["auto", "naive", "mma"]}
    big = tc_cases.Case("square", "gemm", 4096, 4096, 4096)
    assert tc_cases.plan_variants(big, available) == [("auto", None), ("wgmma", None), ("mma", None)]
    skinny = tc_cases.Case("skinny", "linear", 64, 4096, 4096)
    plan = dict(tc_cases.plan_variants(skinny, available))
    assert list(plan) == ["auto", "splitk", "gemv", "mma"]
    assert plan["auto"] is None and plan["mma"] is None
    for rung in ("splitk", "gemv"):
        assert plan[rung] == (f"'{rung}' is not in torch_memopt.variants('linear', 'cuda') "
                              "on this build and GPU")
    assert list(dict(tc_cases.plan_variants(tc_cases.Case("skinny", "linear", 65, 8, 8), available))) \
        == ["auto", "wgmma", "mma"]


@pytest.mark.parametrize("target, ratio, pct_copy, verdict", [
    (tc_cases.Target(1.0), 1.0, None, "PASS"),
    (tc_cases.Target(1.0), 0.999, None, "MISS"),
    (tc_cases.Target(3.0), 3.2, 12.0, "PASS"),
    (tc_cases.Target(1.3, 80.0), 2.0, 80.0, "PASS"),
    (tc_cases.Target(1.3, 80.0), 2.0, 79.9, "MISS"),
    (tc_cases.Target(1.3, 80.0), 1.2, 95.0, "MISS"),
    (tc_cases.Target(1.3, 80.0), 2.0, None, None),
    (tc_cases.Target(0.95), None, None, None),
])
def test_target_judges_every_bar(target, ratio, pct_copy, verdict):
    assert target.judge(ratio, pct_copy) == verdict


class FakeBackend:
    """CPU stand-in for tc_gemm.backend.CudaBackend: the real input factory and cuBLAS
    peers (torch.mm / F.linear on the CPU), invented times; mma gives a wrong result,
    wgmma raises."""

    MS = {"cublas": 2.0, "auto": 1.6, "wgmma": 1.6, "gemv": 0.5, "mma": 1.0}

    def __init__(self):
        self.current = None
        self.made = 0

    def inputs(self, case, dtype, count):
        self.made += count
        return [tc_backend.make_inputs(case, getattr(torch, dtype), device="cpu") for _ in range(count)]

    def function(self, case, variant):
        self.current = variant
        peer = tc_backend.function(case, tc_cases.CUBLAS)
        if variant == "mma":
            return lambda *inputs: peer(*inputs) * 1.1
        if variant == "wgmma":
            def refuse(*inputs):
                raise RuntimeError("memopt::gemm: wgmma refuses this\nsecond line")
            return refuse
        return peer

    def probe_ms(self, call):
        call()
        return self.MS[self.current]

    def time(self, call, probe_ms):
        return self.MS[self.current], "do_bench"

    def clean_l2_ms(self, call):
        return self.MS[self.current] * 0.5

    def timer_set_count(self, case, dtype):
        return 3

    def timer(self, fn, input_sets, label):
        assert len(input_sets) == 3
        return self.MS[self.current] * 1.05


BIG = tc_cases.Case("odd", "gemm", 300, 40, 24)  # M > 256: the sampled-rows fp32 reference
DECODE = tc_cases.Case("skinny", "linear", 1, 96, 64)


def fake_run(case, dtype="bfloat16", available=None, copy_gbps=4000.0, lines=None):
    available = available or {"gemm": ["auto", "mma", "wgmma", "gemv"],
                              "linear": ["auto", "mma", "wgmma", "gemv"]}
    log = lines.append if lines is not None else (lambda line: None)
    return tc_measure.measure_case(case, dtype, tc_cases.plan_variants(case, available), FakeBackend(),
                                   copy_gbps=copy_gbps, cross_check=True, log=log)


def test_measure_case_checks_times_and_relates_every_call():
    lines = []
    records = {r["variant"]: r for r in fake_run(BIG, lines=lines)}
    assert list(records) == ["cublas", "auto", "wgmma", "mma"]
    cublas, auto, wgmma, mma = records.values()
    assert cublas["correct"] is True and cublas["ratio"] is None and cublas["target"] is None
    assert cublas["tflops"] == pytest.approx(BIG.flop / 2e-3 / 1e12)
    assert auto["reference"] == "fp32 torch.mm (tf32 off), 256 rows"
    assert auto["correct"] is True and auto["rel_err"] < 1e-2
    assert auto["ratio"] == pytest.approx(1.25) and auto["ratio_timer"] == pytest.approx(1.25)
    assert auto["cublas_ms"] == 2.0 and auto["ms_timer"] == pytest.approx(1.68)
    assert auto["timer_sets"] == 3 and auto["method"] == "do_bench"
    assert auto["target"] == {"ratio": 3.0, "pct_copy": None} and auto["verdict"] == "MISS"
    assert auto["weight_gbps"] is None and auto["pct_copy"] is None  # not a skinny shape
    assert wgmma["status"] == "error" and wgmma["verdict"] is None
    assert wgmma["reason"] == "RuntimeError: memopt::gemm: wgmma refuses this"
    assert mma["correct"] is False and mma["verdict"] == "WRONG" and mma["ms_do_bench"] == 1.0
    assert mma["ratio"] is None and mma["tflops"] is None  # timed, never a speed-up
    assert mma["reason"].startswith("wrong result: relative error") and mma["rel_err"] > 0.05
    assert len(lines) == 4 and "WRONG" in lines[3] and "error" in lines[2] and "1.25×" in lines[1]
    import json
    json.dumps(list(records.values()), allow_nan=False)


def test_measure_case_reports_weight_bandwidth_and_skips_a_missing_rung():
    available = {"gemm": ["auto", "mma"], "linear": ["auto", "mma"]}
    records = {r["variant"]: r for r in fake_run(DECODE, "float16", available)}
    assert list(records) == ["cublas", "auto", "splitk", "gemv", "mma"]
    auto, gemv = records["auto"], records["gemv"]
    assert auto["reference"] == "float64" and auto["correct"] is True
    assert auto["weight_gbps"] == pytest.approx(2 * 96 * 64 / 1.6e-3 / 1e9)
    assert auto["pct_copy"] == pytest.approx(100 * auto["weight_gbps"] / 4000.0)
    assert records["cublas"]["weight_gbps"] == pytest.approx(2 * 96 * 64 / 2e-3 / 1e9)
    # The clean-L2 timing (fake: half the do_bench time) is reported beside it, and the
    # verdict stays on do_bench's figure.
    assert auto["ms_clean_l2"] == pytest.approx(0.8)
    assert auto["weight_gbps_clean_l2"] == pytest.approx(2 * auto["weight_gbps"])
    assert auto["pct_copy_clean_l2"] == pytest.approx(2 * auto["pct_copy"])
    assert auto["target"] == {"ratio": 1.3, "pct_copy": 80.0}
    assert auto["verdict"] == "MISS"  # 1.25x and a tiny fake bandwidth
    assert gemv["status"] == "skipped" and "variants('linear', 'cuda')" in gemv["reason"]
    assert gemv["ms_do_bench"] is None and gemv["verdict"] is None


def test_check_flags_a_non_finite_output_without_an_inf_in_json():
    record = tc_measure.empty_record(BIG, "bfloat16", "auto")
    out = torch.full((BIG.M, BIG.N), float("nan"))
    tc_measure.check(record, out, None, torch.ones(BIG.M, BIG.N), "float64", BIG.M, BIG.N)
    assert record["correct"] is False and record["rel_err"] is None
    assert record["reason"] == "output of a wrong shape or with non-finite values"
    assert tc_measure.relative_frobenius_error(torch.ones(3, 4), torch.ones(4, 3)) == math.inf


def test_sampled_rows_reach_the_last_row():
    assert tc_measure.sample_rows(256, "cpu") is None
    rows = tc_measure.sample_rows(4097, "cpu")
    assert rows.numel() == 256 and rows[0] == 0 and rows[-1] == 4096


def _document(records):
    return {"meta": {"gpu": "NVIDIA H200", "torch": "2.11.0+cu130", "cuda": "13.0",
                     "timing": "do_bench medians, L2 flushed"},
            "copy": {"bytes": 2 ** 31, "gbps": 4249.0}, "records": records}


def test_summary_table_puts_the_target_and_verdict_beside_each_shape():
    records = fake_run(BIG) + fake_run(DECODE, available={"gemm": ["auto", "mma"],
                                                           "linear": ["auto", "mma"]})
    headers, rows = tc_report.summary_table(records)
    assert headers == ["dtype", "shape", "layout", "cuBLAS TFLOP/s", "auto TFLOP/s", "auto ×",
                       "auto × Timer", "mma ×", "wgmma ×", "gemv ×", "splitk ×", "weight GB/s",
                       "% copy", "% copy, clean L2", "target", "result"]
    big, decode = rows
    assert big[:3] == ["bfloat16", "300×40×24", "gemm"]
    assert big[5:11] == ["1.25×", "1.25×", "WRONG", "error", "—", "—"]
    assert big[11:] == ["—", "—", "—", "≥ 3.00×", "MISS"]
    assert decode[1:3] == ["1×96×64", "linear"]
    assert decode[7:11] == ["WRONG", "—", "skip", "skip"]
    assert decode[12].endswith("%") and decode[13].endswith("%")
    assert decode[14:] == ["≥ 1.30×, ≥ 80% copy", "MISS"]
    assert tc_report.acceptance_counts(records) == {"PASS": 0, "MISS": 2, "WRONG": 0,
                                                    "not measured": 0}


def test_summary_table_passes_a_met_target_and_marks_a_wrong_auto():
    records = fake_run(tc_cases.Case("square", "gemm", 64, 48, 32))
    (row,) = tc_report.summary_table(records)[1]
    assert row[-2:] == ["≥ 1.00×", "PASS"]
    auto = next(r for r in records if r["variant"] == "auto")
    auto.update(correct=False, verdict="WRONG", ratio=None)
    (row,) = tc_report.summary_table(records)[1]
    assert row[4:6] == ["WRONG", "WRONG"] and row[-1] == "WRONG"
    assert tc_report.acceptance_counts(records)["WRONG"] == 1


def test_console_report_prints_the_table_last_with_aligned_rows():
    lines = []
    tc_report.report(_document(fake_run(BIG) + fake_run(DECODE)), lines.append)
    text = "\n".join(lines)
    assert "device-to-device copy of 2 GiB: 4,249 GB/s" in text
    assert "not measured: wgmma error: RuntimeError: memopt::gemm: wgmma refuses this" in text
    assert "WRONG: mma bfloat16 300x40x24 gemm: wrong result" in text
    table = lines[-2].splitlines()
    assert table[0].startswith("dtype") and table[0].rstrip().endswith("result")
    assert len({len(line) for line in table}) == 1  # every row padded to the header's width
    assert lines[-1] == "acceptance (auto): 0 PASS, 2 MISS, 0 WRONG, 0 not measured"


def test_json_safe_drops_non_finite_floats():
    script = _script("tc_gemm")
    document = {"a": [1.0, math.inf, {"b": math.nan, "c": 2}], "d": (None, "x", -math.inf)}
    assert script.json_safe(document) == {"a": [1.0, None, {"b": None, "c": 2}], "d": [None, "x", None]}


def test_tc_gemm_help_runs_without_a_gpu():
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "tc_gemm.py"), "--help"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "--quick" in result.stdout and "tc_gemm_h200.json" in result.stdout


@pytest.mark.skipif(HAS_CUDA, reason="checks the answer of a machine without a GPU")
def test_scripts_exit_2_without_a_gpu(tmp_path):
    out = tmp_path / "tc.json"
    assert _script("tc_gemm").main(["--quick", "--out", str(out)]) == 2
    assert not out.exists()
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "tc_sanitize.py")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "needs a CUDA GPU" in result.stdout
