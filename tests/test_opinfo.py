"""PyTorch's own OpInfo samples (torch.testing._internal.common_methods_invocations,
issue 18) for the ops memopt stands in for: under enable() (with memopt's CPU kernels
on the CPU, use_cpu_kernels) every sample gives the stock op's result, memopt takes
the samples it claims, and the error inputs still raise; the samples inside an op's
contract give the same straight through torch.ops.memopt."""

import pytest
import torch
from torch.testing._internal.common_methods_invocations import op_db

import torch_memopt
from memopt_calls import count_memopt_calls

NAMES = ("nn.functional.linear", "mm", "matmul", "addmm", "nn.functional.layer_norm",
         "nn.functional.rms_norm", "softmax", "nn.functional.softmax")
OPINFOS = [o for o in op_db if o.name in NAMES]
# What memopt's 16-bit kernels round differently from the stock ones (fp32 sums of
# products, then one rounding); fp32 within float32's own noise.
TOLERANCE = {torch.float32: (1e-4, 1e-5), torch.bfloat16: (2e-2, 2e-2), torch.float16: (2e-3, 2e-3)}


def _id(opinfo):
    return opinfo.name + (f".{opinfo.variant_test_name}" if opinfo.variant_test_name else "")


def _call(opinfo, sample):
    return opinfo.op(sample.input, *sample.args, **sample.kwargs)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["float32", "bfloat16"])
@pytest.mark.parametrize("opinfo", OPINFOS, ids=_id)
def test_samples_under_enable_match_the_stock_op(opinfo, dtype, device):
    if dtype not in opinfo.supported_dtypes(device):
        pytest.skip(f"{_id(opinfo)} has no {dtype} samples on {device}")
    samples = list(opinfo.sample_inputs(device, dtype, requires_grad=False))
    assert samples, "OpInfo gave no samples"
    rtol, atol = TOLERANCE[dtype]
    taken = 0
    for sample in samples:
        expected = _call(opinfo, sample)
        with torch_memopt.use_cpu_kernels(), count_memopt_calls() as calls, torch_memopt.enable():
            got = _call(opinfo, sample)
        taken += sum(calls.values())
        torch.testing.assert_close(got, expected, rtol=rtol, atol=atol, equal_nan=True,
                                   msg=lambda m: f"{_id(opinfo)} {sample}: {m}")
    # Every family has samples memopt's contract covers (2-D matmuls, norms, softmax),
    # but addmm, which memopt does not stand in for, and softmax.with_dtype, whose
    # samples all ask for float64 (memopt computes in fp32 at most: the stock op's).
    if _id(opinfo) not in ("addmm", "addmm.decomposed", "softmax.with_dtype"):
        assert taken > 0, f"memopt took none of the {len(samples)} samples of {_id(opinfo)}"


@pytest.mark.parametrize("opinfo", [o for o in OPINFOS if o.error_inputs_func is not None], ids=_id)
def test_error_inputs_still_raise(opinfo, device):
    errors = list(opinfo.error_inputs(device))
    assert errors, f"{_id(opinfo)} lists an error_inputs function but gave no inputs"
    for error in errors:
        sample = error.sample_input
        with torch_memopt.use_cpu_kernels(), torch_memopt.enable(), pytest.raises(error.error_type):
            _call(opinfo, sample)


def _direct(name, sample):
    """The sample as a torch.ops.memopt call, or None where it is outside the op's
    contract (a matmul of other than two 2-D operands, a float64 softmax)."""
    x, args, kwargs = sample.input, sample.args, sample.kwargs
    if name in ("mm", "matmul"):
        b = args[0]
        return (lambda: torch.ops.memopt.gemm(x, b)) if x.dim() == 2 and b.dim() == 2 else None
    if name == "nn.functional.linear":
        weight, bias = args[0], args[1] if len(args) > 1 else kwargs.get("bias")
        return (lambda: torch.ops.memopt.linear(x, weight, bias)) if x.dim() >= 1 else None
    if name == "nn.functional.layer_norm":
        shape, weight, bias = list(args[0]), *(list(args[1:3]) + [None, None])[:2]
        return lambda: torch.ops.memopt.layer_norm(x, shape, weight, bias, kwargs.get("eps", 1e-5))
    if name == "nn.functional.rms_norm":
        shape, weight = list(args[0]), args[1] if len(args) > 1 else None
        return lambda: torch.ops.memopt.rms_norm(x, shape, weight, kwargs.get("eps"))
    if name in ("softmax", "nn.functional.softmax"):
        dim = args[0] if args else kwargs.get("dim")
        dtype = kwargs.get("dtype")
        if dim is None or dtype not in (None, torch.float32, torch.float16, torch.bfloat16):
            return None
        return lambda: torch.ops.memopt.softmax(x, dim, dtype)
    return None


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["float32", "bfloat16"])
@pytest.mark.parametrize("opinfo", [o for o in OPINFOS if o.name != "addmm"], ids=_id)
def test_samples_in_the_contract_straight_through_torch_ops_memopt(opinfo, dtype, device):
    if dtype not in opinfo.supported_dtypes(device):
        pytest.skip(f"{_id(opinfo)} has no {dtype} samples on {device}")
    rtol, atol = TOLERANCE[dtype]
    direct = 0
    for sample in opinfo.sample_inputs(device, dtype, requires_grad=False):
        call = _direct(opinfo.name, sample)
        if call is None:
            continue
        direct += 1
        torch.testing.assert_close(call(), _call(opinfo, sample), rtol=rtol, atol=atol,
                                   equal_nan=True, msg=lambda m: f"{_id(opinfo)} {sample}: {m}")
    if _id(opinfo) != "softmax.with_dtype":  # float64 only, outside the contract
        assert direct > 0, f"no sample of {_id(opinfo)} is in memopt's contract"
