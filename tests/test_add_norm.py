"""The fused residual add + norm ops, add_layer_norm and add_rms_norm (issue 5):
both outputs against the two stock calls they replace (float64 norm of the sum
rounded to the dtype), on every device and dtype, at widths that take the fused
kernel and its fallback; bad input; opcheck; torch.compile; inference only."""

import pytest
import torch
import torch.nn.functional as F

import torch_memopt
from conftest import requires_cuda
from cuda_kernels import kernels_run
from torch_memopt.bench.calls import relative_error

TOLERANCE = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1e-2}
# (input shape, normalized_shape): widths 33 and 127 are no whole 16-byte pack (the
# fallback), 4096 and 4097 wide rows, two normalized dims, no rows.
SHAPES = [((7, 33), [33]), ((3, 127), [127]), ((16, 4096), [4096]), ((2, 4097), [4097]),
          ((2, 3, 5, 8), [5, 8]), ((0, 16), [16]), ((1, 1), [1])]
OPS = ["add_layer_norm", "add_rms_norm"]


def randn(*shape, device, dtype):
    return torch.randn(shape, device=device, dtype=torch.float32).to(dtype)


def reference(op, x, r, norm, weight, bias, eps):
    s = x + r  # rounded to the dtype, as the stock code does
    if op == "add_layer_norm":
        out = F.layer_norm(s.double(), norm, None if weight is None else weight.double(),
                           None if bias is None else bias.double(), eps)
    else:
        out = F.rms_norm(s.double(), norm, None if weight is None else weight.double(), eps)
    return out, s


def call(op, x, r, norm, weight, bias, eps, variant="auto"):
    if op == "add_layer_norm":
        return torch_memopt.add_layer_norm(x, r, norm, weight, bias, eps, variant=variant)
    return torch_memopt.add_rms_norm(x, r, norm, weight, eps, variant=variant)


@pytest.mark.parametrize("fp32_params", [False, True], ids=["params-in-dtype", "fp32-params"])
@pytest.mark.parametrize("op", OPS)
def test_matches_the_two_stock_calls(op, device, dtype, fp32_params):
    failures = []
    for shape, norm in SHAPES:
        x = randn(*shape, device=device, dtype=dtype) + 2
        r = randn(*shape, device=device, dtype=dtype)
        pdtype = torch.float32 if fp32_params else dtype
        weight = randn(*norm, device=device, dtype=pdtype)
        bias = randn(*norm, device=device, dtype=pdtype) if op == "add_layer_norm" else None
        for variant in torch_memopt.variants(op, device):
            out, s = call(op, x, r, norm, weight, bias, 1e-5, variant)
            ref_out, ref_s = reference(op, x, r, norm, weight, bias, 1e-5)
            if device == "cuda":
                torch.cuda.synchronize()
            if out.shape != x.shape or s.shape != x.shape or out.dtype != dtype or s.dtype != dtype:
                failures.append(f"{variant} {shape}: got {out.shape} {out.dtype}, {s.shape} {s.dtype}")
                continue
            if not (out.is_contiguous() and s.is_contiguous()):
                failures.append(f"{variant} {shape}: outputs not contiguous")
            if not torch.equal(s, ref_s):
                failures.append(f"{variant} {shape}: the sum differs from input + residual")
            if out.numel() and not relative_error(out, ref_out) < TOLERANCE[dtype]:
                failures.append(f"{variant} {shape}: relative error {relative_error(out, ref_out):.2e}")
    assert not failures, f"{op} {dtype}:\n" + "\n".join(failures)


@pytest.mark.parametrize("op", OPS)
def test_non_contiguous_inputs_and_no_weight(op, device):
    x = randn(8, 96, device=device, dtype=torch.float32)[:, ::2]
    r = randn(48, 8, device=device, dtype=torch.float32).t()
    out, s = call(op, x, r, [48], None, None, 1e-5)
    ref_out, ref_s = reference(op, x, r, [48], None, None, 1e-5)
    assert torch.equal(s, ref_s)
    assert relative_error(out, ref_out) < 1e-5


@pytest.mark.parametrize("op", OPS)
def test_bad_residual_is_named(op, device):
    x = randn(4, 16, device=device, dtype=torch.float32)
    with pytest.raises(RuntimeError, match=rf"memopt::{op}: expected residual of the input's shape"):
        call(op, x, randn(4, 8, device=device, dtype=torch.float32), [16], None, None, 1e-5)
    with pytest.raises(TypeError, match=rf"memopt::{op}: expected residual of the input's dtype"):
        call(op, x, randn(4, 16, device=device, dtype=torch.bfloat16), [16], None, None, 1e-5)
    with pytest.raises(ValueError, match="variant"):
        call(op, x, x, [16], None, None, 1e-5, variant="nope")


@pytest.mark.parametrize("op", OPS)
def test_opcheck(op, device):
    x = randn(5, 24, device=device, dtype=torch.float32)
    r = randn(5, 24, device=device, dtype=torch.float32)
    w = randn(24, device=device, dtype=torch.float32)
    args = (x, r, [24], w, w, 1e-5) if op == "add_layer_norm" else (x, r, [24], w, 1e-5)
    torch.library.opcheck(getattr(torch.ops.memopt, op).default, args)


def test_compiles_fullgraph_in_a_block(device):
    torch._dynamo.reset()
    x = randn(4, 32, device=device, dtype=torch.float32)
    g = randn(32, device=device, dtype=torch.float32)

    def block(x, h):
        h, s = torch_memopt.add_rms_norm(x, h, [32], g)
        out, _ = torch_memopt.add_layer_norm(h, s, [32], g, g)
        return out

    compiled = torch.compile(block, fullgraph=True)
    h = randn(4, 32, device=device, dtype=torch.float32)
    torch.testing.assert_close(compiled(x, h), block(x, h))


@pytest.mark.parametrize("op", OPS)
def test_backward_raises_naming_the_op(op, device):
    x = randn(3, 8, device=device, dtype=torch.float32).requires_grad_()
    out, _ = call(op, x, randn(3, 8, device=device, dtype=torch.float32), [8], None, None, 1e-5)
    with pytest.raises(RuntimeError, match=rf"memopt::{op} is inference-only and has no backward"):
        out.sum().backward()


@requires_cuda
@pytest.mark.cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["float32", "bfloat16"])
@pytest.mark.parametrize("op", OPS)
def test_widths_off_the_16_byte_pack_stay_fused(op, dtype, norm_peel):
    """Widths whose rows break the 16-byte pack (2050, 4100, 4098 and 2049 in bf16; every
    width in fp32) run the fused kernel alone, no add kernel before it, and match the
    two stock calls: peeled, any width; in narrow packs, those an 8- or 4-byte pack
    fits (odd 16-bit widths then take the add, then the norm, with the same results)."""
    failures = []
    for rows, n in [(33, 2050), (5, 4100), (3, 4098), (7, 2049)]:
        x = randn(rows, n, device="cuda", dtype=dtype) + 2
        r = randn(rows, n, device="cuda", dtype=dtype)
        weight = randn(n, device="cuda", dtype=dtype)
        bias = randn(n, device="cuda", dtype=dtype) if op == "add_layer_norm" else None
        out, s = call(op, x, r, [n], weight, bias, 1e-5)
        ref_out, ref_s = reference(op, x, r, [n], weight, bias, 1e-5)
        if not torch.equal(s, ref_s):
            failures.append(f"{rows}x{n}: the sum differs from input + residual")
        if not relative_error(out, ref_out) < TOLERANCE[dtype]:
            failures.append(f"{rows}x{n}: relative error {relative_error(out, ref_out):.2e}")
        names = kernels_run(lambda: call(op, x, r, [n], weight, bias, 1e-5))
        fused_expected = norm_peel or dtype == torch.float32 or n % 2 == 0
        if fused_expected and (len(names) != 1 or "norm_vectorized_kernel" not in names[0]):
            failures.append(f"{rows}x{n}: ran {names}, not the fused kernel alone")
    assert not failures, f"{op} {dtype}:\n" + "\n".join(failures)


@requires_cuda
@pytest.mark.cuda
@pytest.mark.parametrize("op", OPS)
def test_parameters_early_match_the_ones_read_late(op):
    """The fused add with its parameters loaded into registers with the row (the early
    instance, small grids), prefetched, or read after the reductions: the same bits in both
    outputs, peeled and aligned rows, parameters off 16 bytes, fp32 parameters, grids of
    one and of a few hundred rows; and the float64 reference."""
    from torch_memopt.testing.switches import EARLY, LATE, PREFETCH, PEELED, norm_switches

    cases = [(torch.bfloat16, torch.bfloat16, 1, 4096, 0), (torch.bfloat16, torch.float32, 300, 4096, 0),
             (torch.float16, torch.float16, 5, 2050, 1), (torch.float32, torch.float32, 64, 3072, 0),
             (torch.bfloat16, torch.bfloat16, 40, 8192, 0),
             # 512-thread rows whose parameters fit registers: fp32 8192, bf16 16384
             (torch.float32, torch.float32, 1, 8192, 0), (torch.bfloat16, torch.bfloat16, 8, 16384, 0),
             # 64-thread rows: their late add_rms_norm kernels run capped at 64 registers
             (torch.float32, torch.float32, 200, 768, 0), (torch.bfloat16, torch.bfloat16, 100, 2048, 0)]
    for dtype, pdtype, rows, n, offset in cases:
        label = f"{op} {dtype} x {pdtype} {rows}x{n} params +{offset}"
        x = randn(rows, n, device="cuda", dtype=dtype) + 2
        r = randn(rows, n, device="cuda", dtype=dtype)
        weight = randn(n + offset, device="cuda", dtype=pdtype)[offset:]
        bias = randn(n + offset, device="cuda", dtype=pdtype)[offset:] if op == "add_layer_norm" else None
        outputs = {}
        for mode in (LATE, EARLY, PREFETCH):
            with norm_switches(param_stage=mode, peel=PEELED):
                outputs[mode] = call(op, x, r, [n], weight, bias, 1e-5)
        for mode in (EARLY, PREFETCH):
            assert torch.equal(outputs[mode][0], outputs[LATE][0]), f"{label}: mode {mode} differs"
            assert torch.equal(outputs[mode][1], outputs[LATE][1]), f"{label}: sum, mode {mode}"
        ref_out, ref_s = reference(op, x, r, [n], weight, bias, 1e-5)
        assert torch.equal(outputs[EARLY][1], ref_s), label
        assert relative_error(outputs[EARLY][0], ref_out) < TOLERANCE[dtype], label
