"""The fp32 GEMM ladder (issue 3): every rung against a float64 reference on
fresh random inputs, at odd shapes, with row- and column-major B, misaligned
operands (the 16-byte paths must fall back), and linear's fused epilogue.

Relative Frobenius error < 1e-5 (fp32 accumulation over K <= 4097)."""

import pytest
import torch
import torch.nn.functional as F

import torch_memopt
from conftest import requires_cuda
from torch_memopt.bench.calls import relative_error

pytestmark = [requires_cuda, pytest.mark.cuda]

RUNGS = ["naive", "coalesced", "smem_tiled", "smem_padded", "double_buffered",
         "register_blocked", "vectorized", "warptiled"]
ODD = [1, 7, 33, 127, 1000, 4097]


def _shapes():
    """Each of M, N, K takes every odd size while the other two stay odd and
    moderate, plus corners where several are extreme at once."""
    shapes = set()
    for v in ODD:
        shapes |= {(v, 33, 127), (127, v, 33), (33, 127, v)}
    shapes |= {(1, 1, 1), (4097, 7, 1000), (1000, 4097, 7), (7, 1000, 4097), (1, 4097, 4097),
               (129, 130, 131), (256, 256, 256)}
    return sorted(shapes)


def test_ladder_is_listed_in_order():
    """The fp32 ladder in order after auto; the tensor-core rungs follow it."""
    for op in ("gemm", "linear"):
        assert torch_memopt.variants(op, "cuda")[:len(RUNGS) + 1] == ["auto"] + RUNGS


@pytest.mark.parametrize("rung", RUNGS)
@pytest.mark.parametrize("b_layout", ["row_major", "col_major"])
def test_rung_matches_float64(rung, b_layout):
    for M, N, K in _shapes():
        a = torch.randn(M, K, device="cuda")
        b = torch.randn(K, N, device="cuda") if b_layout == "row_major" else \
            torch.randn(N, K, device="cuda").t()
        ref = torch.mm(a.double(), b.double())
        out = torch_memopt.gemm(a, b, variant=rung)
        err = relative_error(out, ref)
        assert err < 1e-5, f"{rung} {M}x{N}x{K} {b_layout}: relative error {err:.2e}"


@pytest.mark.parametrize("b_layout", ["row_major", "col_major", "misaligned"])
@pytest.mark.parametrize("M,N,K", [(2048, 2560, 1024), (2049, 2305, 1001), (300, 200, 64)])
def test_warptiled_on_both_tile_shapes(M, N, K, b_layout):
    """warptiled runs 128x256 tiles when they are at least one a SM and 128x128
    tiles below that. On a 132-SM H200 the first two shapes take the large tiles
    (160 and 170 of them): all blocks interior (the unchecked copies) in the first,
    blocks with tails in M, N and K beside interior ones in the second; the third
    takes the small tiles. "misaligned": B one float off 16 bytes, the 4-byte copies.
    "col_major" at M >= 512 reaches the kernel as a row-major copy of B (the 16-byte
    path), at M = 300 as it is (4-byte transposed copies)."""
    a = torch.randn(M, K, device="cuda")
    if b_layout == "row_major":
        b = torch.randn(K, N, device="cuda")
    elif b_layout == "col_major":
        b = torch.randn(N, K, device="cuda").t()
    else:
        b = torch.randn(K, N + 1, device="cuda")[:, 1:]
    err = relative_error(torch_memopt.gemm(a, b, variant="warptiled"), torch.mm(a.double(), b.double()))
    assert err < 1e-5, f"{M}x{N}x{K} {b_layout}: relative error {err:.2e}"


@pytest.mark.parametrize("weight", ["contiguous", "row_slice"])
@pytest.mark.parametrize("M", [511, 512, 1500])
def test_warptiled_linear_on_both_sides_of_the_row_major_copy(M, weight):
    """linear's weight [N, K] is B column-major; from M = 512 warptiled reads a
    row-major copy of it instead (our tiled transpose: N = 1001 and K = 520 leave
    partial tiles both ways): the same result as below, bias and gelu included.
    "row_slice": the weight's rows 600 floats apart, not K."""
    x = torch.randn(M, 520, device="cuda")
    width = 520 if weight == "contiguous" else 600
    w = (torch.randn(1001, width, device="cuda") * 520 ** -0.5)[:, width - 520:]
    bias = torch.randn(1001, device="cuda")
    out = torch_memopt.linear(x, w, bias, activation="gelu", variant="warptiled")
    ref = F.gelu(F.linear(x.double(), w.double(), bias.double()))
    err = relative_error(out, ref)
    assert err < 1e-5, f"M = {M}: relative error {err:.2e}"


@pytest.mark.parametrize("rung", RUNGS)
def test_rung_with_misaligned_and_strided_operands(rung):
    """Offsets of one float break 16-byte alignment; a column-major A and a B
    with neither unit stride need the layout copies of the launcher."""
    base_a = torch.randn(130, 66, device="cuda")
    base_b = torch.randn(65, 131, device="cuda")
    cases = {
        "misaligned": (base_a[1:, 1:], base_b[:, 1:]),         # [129, 65] @ [65, 130]
        "column-major a": (torch.randn(65, 129, device="cuda").t(), base_b[:, 1:]),
        "b with no unit stride": (base_a[1:, 1:], torch.randn(65, 260, device="cuda")[:, ::2]),
    }
    for name, (a, b) in cases.items():
        err = relative_error(torch_memopt.gemm(a, b, variant=rung), torch.mm(a.double(), b.double()))
        assert err < 1e-5, f"{rung} {name}: relative error {err:.2e}"


@pytest.mark.parametrize("rung", RUNGS)
@pytest.mark.parametrize("activation", ["none", "relu", "gelu", "gelu_tanh", "silu"])
def test_linear_epilogue(rung, activation):
    x = torch.randn(3, 45, 127, device="cuda")
    w = torch.randn(257, 127, device="cuda")
    bias = torch.randn(257, device="cuda")
    act = {"none": lambda t: t, "relu": F.relu, "gelu": F.gelu,
           "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"), "silu": F.silu}[activation]
    ref = act(F.linear(x.double(), w.double(), bias.double()))
    out = torch_memopt.linear(x, w, bias, activation=activation, variant=rung)
    assert out.shape == (3, 45, 257)
    assert relative_error(out, ref) < 1e-5


@pytest.mark.parametrize("rung", RUNGS)
def test_every_output_written(rung):
    """The allocator hands the op a NaN-filled block: unwritten tails show."""
    M, N, K = 1000, 1001, 129
    block = torch.full((M * N,), float("nan"), device="cuda")
    del block
    out = torch_memopt.gemm(torch.randn(M, K, device="cuda"), torch.randn(K, N, device="cuda"),
                            variant=rung)
    assert torch.isfinite(out).all()


@pytest.mark.parametrize("rung", RUNGS[1:])
def test_fp32_rungs_refuse_half_dtypes(rung):
    a = torch.randn(8, 8, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(TypeError, match=rf"memopt::gemm: variant '{rung}' is a rung of the fp32 "
                                        r"ladder and takes float32, got bfloat16; variants for "
                                        r"bfloat16: auto, naive"):
        torch_memopt.gemm(a, a, variant=rung)


def test_auto_takes_the_top_rung_for_fp32():
    a, b = torch.randn(300, 200, device="cuda"), torch.randn(200, 100, device="cuda")
    torch.testing.assert_close(torch_memopt.gemm(a, b), torch_memopt.gemm(a, b, variant="warptiled"),
                               rtol=0, atol=0)


@pytest.mark.parametrize("rung", RUNGS)
def test_empty_inner_dimension_gives_the_epilogue_of_zero(rung):
    """K = 0: every output is act(0 + bias), as F.linear gives."""
    x = torch.randn(5, 0, device="cuda")
    w = torch.randn(7, 0, device="cuda")
    bias = torch.randn(7, device="cuda")
    out = torch_memopt.linear(x, w, bias, activation="relu", variant=rung)
    torch.testing.assert_close(out, F.relu(bias).expand(5, 7))
    assert torch.equal(torch_memopt.gemm(x, w.t(), variant=rung), torch.zeros(5, 7, device="cuda"))


@pytest.mark.parametrize("rung", RUNGS)
def test_size_one_dims_with_odd_strides(rung):
    """A size-1 dim's stride never steps, but the other one still does: B [1, N]
    sliced from a column (n-stride C) or expanded (strides 0), and a linear weight
    [N, 1] with no unit stride, must be read through their real strides."""
    u = torch.randn(37, device="cuda")
    column = torch.randn(130, 9, device="cuda")[:, 0]          # [130], stride 9
    expanded = torch.randn(1, device="cuda").expand(130)       # [130], stride 0
    for name, v in {"column slice": column, "expanded": expanded}.items():
        b = v[None, :]                                          # [1, 130]
        out = torch_memopt.gemm(u[:, None], b, variant=rung)
        assert relative_error(out, torch.mm(u[:, None].double(), b.double())) < 1e-5, name
    w = torch.randn(65, 8, device="cuda")[:, ::8]              # [65, 1], strides (8, 8)
    x = torch.randn(4, 1, device="cuda")
    out = torch_memopt.linear(x, w, variant=rung)
    assert relative_error(out, F.linear(x.double(), w.double())) < 1e-5
