"""Bad input raises before any launch, with a message that names the op, the
argument, what was expected and what came. Each case asserts the message."""

import pytest
import torch

import torch_memopt
from conftest import requires_cuda


def _r(*shape, device="cpu", dtype=torch.float32):
    return torch.randn(shape, device=device).to(dtype)


def bad_inputs(device):
    r = lambda *s, dtype=torch.float32: _r(*s, device=device, dtype=dtype)
    tm = torch_memopt
    # (id, call, exception type, message pattern)
    return [
        # dtype mismatch between arguments
        ("gemm dtype mismatch", lambda: tm.gemm(r(4, 3), r(3, 2, dtype=torch.float16)), TypeError,
         r"memopt::gemm: expected b to have dtype float32 \(the dtype of a\), got float16"),
        ("linear bias dtype", lambda: tm.linear(r(4, 3), r(2, 3), r(2, dtype=torch.bfloat16)),
         TypeError, r"memopt::linear: expected bias to have dtype float32 \(the dtype of input\), got bfloat16"),
        ("norm weight dtype", lambda: tm.layer_norm(r(4, 8, dtype=torch.bfloat16), [8], r(8, dtype=torch.float16)),
         TypeError, r"memopt::layer_norm: expected weight to have dtype bfloat16 \(the dtype of input\) or float32, got float16"),
        # wrong rank
        ("gemm 1-D b", lambda: tm.gemm(r(4, 3), r(3)), RuntimeError,
         r"memopt::gemm: expected b to be a 2-D tensor \[K, N\], got a 1-D tensor of shape \[3\]"),
        ("gemm 3-D a", lambda: tm.gemm(r(2, 4, 3), r(3, 2)), RuntimeError,
         r"memopt::gemm: expected a to be a 2-D tensor \[M, K\], got a 3-D tensor"),
        ("linear 1-D weight", lambda: tm.linear(r(4, 3), r(3)), RuntimeError,
         r"memopt::linear: expected weight to be a 2-D tensor \[N, K\], got a 1-D tensor"),
        ("linear 0-D input", lambda: tm.linear(r(), r(2, 1)), RuntimeError,
         r"memopt::linear: expected input to have at least 1 dimension"),
        # inner-dimension mismatch
        ("gemm inner dim", lambda: tm.gemm(r(4, 3), r(5, 2)), RuntimeError,
         r"memopt::gemm: expected b.size\(0\) to equal a.size\(1\) \(the inner dimension K = 3\), "
         r"got b of shape \[5, 2\] for a of shape \[4, 3\]"),
        ("linear inner dim", lambda: tm.linear(r(4, 3), r(2, 5)), RuntimeError,
         r"memopt::linear: expected weight.size\(1\) to equal input.size\(-1\) \(the inner dimension K = 3\)"),
        # normalized_shape against the trailing dims
        ("layer_norm normalized_shape", lambda: tm.layer_norm(r(4, 8), [6]), RuntimeError,
         r"memopt::layer_norm: expected input of shape \[\*, 6\] \(trailing dims equal to "
         r"normalized_shape\), got \[4, 8\]"),
        ("rms_norm normalized_shape longer than input", lambda: tm.rms_norm(r(8), [2, 8]),
         RuntimeError, r"memopt::rms_norm: expected input of shape \[\*, 2, 8\]"),
        ("rms_norm empty normalized_shape", lambda: tm.rms_norm(r(4, 8), []), RuntimeError,
         r"memopt::rms_norm: expected normalized_shape to have at least one dimension, got \[\]"),
        # weight / bias shape
        ("layer_norm weight shape", lambda: tm.layer_norm(r(4, 8), [8], r(7)), RuntimeError,
         r"memopt::layer_norm: expected weight of shape \[8\] \(normalized_shape\), got \[7\]"),
        ("layer_norm bias shape", lambda: tm.layer_norm(r(4, 8), [8], r(8), r(2, 4)), RuntimeError,
         r"memopt::layer_norm: expected bias of shape \[8\] \(normalized_shape\), got \[2, 4\]"),
        ("rms_norm weight shape", lambda: tm.rms_norm(r(2, 3, 4), [3, 4], r(12)), RuntimeError,
         r"memopt::rms_norm: expected weight of shape \[3, 4\] \(normalized_shape\), got \[12\]"),
        ("linear bias shape", lambda: tm.linear(r(4, 3), r(2, 3), r(3)), RuntimeError,
         r"memopt::linear: expected bias of shape \[2\] \(N = weight.size\(0\)\), got \[3\]"),
        # dim out of range
        ("softmax dim too large", lambda: tm.softmax(r(2, 3), 2), IndexError,
         r"memopt::softmax: expected dim in \[-2, 1\] for input of shape \[2, 3\], got 2"),
        ("softmax dim too negative", lambda: tm.softmax(r(2, 3), -3), IndexError,
         r"memopt::softmax: expected dim in \[-2, 1\]"),
        # unsupported dtypes
        ("gemm int", lambda: tm.gemm(torch.ones(2, 2, dtype=torch.int32, device=device),
                                     torch.ones(2, 2, dtype=torch.int32, device=device)),
         TypeError, r"memopt::gemm: expected a to have dtype float32, float16 or bfloat16, got int32"),
        ("softmax complex", lambda: tm.softmax(torch.randn(3, dtype=torch.complex64, device=device)),
         TypeError, r"memopt::softmax: expected input to have dtype float32, float16 or bfloat16, got complex64"),
        ("layer_norm float64", lambda: tm.layer_norm(r(2, 4).double(), [4]), TypeError,
         r"memopt::layer_norm: expected input to have dtype float32, float16 or bfloat16, got float64"),
        ("softmax dtype int", lambda: tm.softmax(r(2, 3), -1, torch.int64), TypeError,
         r"memopt::softmax: expected dtype to be float32, float16, bfloat16 or None, got int64"),
        # unknown variant and activation: the messages list the valid ones
        ("unknown variant", lambda: tm.gemm(r(2, 2), r(2, 2), variant="fastest"), ValueError,
         rf"memopt::gemm: unknown variant 'fastest' for {device} tensors; valid variants: auto, "),
        ("unknown norm variant", lambda: tm.rms_norm(r(2, 2), [2], variant="v2"), ValueError,
         r"memopt::rms_norm: unknown variant 'v2' .*valid variants: auto"),
        ("unknown activation", lambda: tm.linear(r(2, 3), r(4, 3), activation="tanh"), ValueError,
         r"memopt::linear: unknown activation 'tanh'; valid activations: none, relu, gelu, gelu_tanh, silu"),
    ]


def _ids(device):
    return [case[0] for case in bad_inputs(device)]


@pytest.mark.parametrize("index", range(len(bad_inputs("cpu"))), ids=_ids("cpu"))
def test_bad_input_message(device, index):
    _, call, exc_type, pattern = bad_inputs(device)[index]
    with pytest.raises(exc_type, match=pattern):
        call()


def test_cpu_variant_list_in_error():
    with pytest.raises(ValueError, match=r"valid variants: auto, reference$"):
        torch_memopt.softmax(torch.randn(3), variant="naive_gpu")


@requires_cuda
@pytest.mark.cuda
@pytest.mark.parametrize(
    "call,pattern",
    [
        (lambda: torch_memopt.gemm(torch.randn(3, 3, device="cuda"), torch.randn(3, 3)),
         r"memopt::gemm: expected b on the same device as a \(cuda:0\), got cpu"),
        (lambda: torch_memopt.linear(torch.randn(2, 3, device="cuda"), torch.randn(4, 3, device="cuda"),
                                     torch.randn(4)),
         r"memopt::linear: expected bias on the same device as input \(cuda:0\), got cpu"),
        (lambda: torch_memopt.layer_norm(torch.randn(2, 3, device="cuda"), [3], torch.randn(3)),
         r"memopt::layer_norm: expected weight on the same device as input \(cuda:0\), got cpu"),
        (lambda: torch_memopt.rms_norm(torch.randn(2, 3), [3], torch.randn(3, device="cuda")),
         r"memopt::rms_norm: expected weight on the same device as input \(cpu\), got cuda:0"),
    ],
    ids=["gemm", "linear-bias", "layer_norm-weight", "rms_norm-cpu-input"],
)
def test_device_mismatch(call, pattern):
    with pytest.raises(RuntimeError, match=pattern):
        call()
