"""gemm and linear past 2^31 elements in an operand or in the output (issue 18).

An element offset held in 32 bits wraps once a matrix holds more than 2^31 elements,
so each case puts one matrix just past it, with the other two small, and checks the
rows and columns at both ends (the last ones sit past the wrap) against float64:
- output: [65537, 32768] from K = 16 (2^31 + 32768 elements);
- a (the input): [32769, 65536], N = 8;
- b (the weight): [65536, 32776] for gemm, [32776, 65536] for linear, M = 16.
Every CUDA variant runs in each dtype it takes (a rung that does not take one raises
TypeError, and is skipped for it). Each matrix is 4 GiB in bf16 and 8 GiB in fp32.
"""

import pytest
import torch
import torch.nn.functional as F

import torch_memopt
from conftest import requires_cuda

TOLERANCE = {torch.bfloat16: 1e-2, torch.float32: 5e-3}  # fp32 covers the tf32 rung
# (what is large, M, N, K)
CASES = [("output", 65537, 32768, 16), ("a", 32769, 8, 65536), ("b", 16, 32776, 65536)]


def enough_memory():
    if not torch.cuda.is_available():
        return False
    free, _ = torch.cuda.mem_get_info()
    return free > 40 * 2**30  # an 8 GiB fp32 operand, an 8 GiB output, a relaid copy, slack


pytestmark = [
    requires_cuda,
    pytest.mark.cuda,
    pytest.mark.skipif(not enough_memory(), reason="needs 40 GiB of free GPU memory"),
    # one xdist worker runs the large-memory modules one test at a time (gpu_check's
    # --dist loadgroup): eight of them at once would not fit in the GPU's memory
    pytest.mark.xdist_group("large_memory"),
]


def ends(size):
    return sorted({0, 1, size - 2, size - 1} & set(range(size)))


def check_ends(out, ref, rows, cols, what):
    picked = out[rows][:, cols].double()
    assert torch.isfinite(picked).all(), f"{what}: non-finite values at rows {rows}, cols {cols}"
    err = ((picked - ref).norm() / ref.norm()).item()
    assert err < TOLERANCE[out.dtype], f"{what}: relative error {err:.2e} at rows {rows}, cols {cols}"


@pytest.mark.parametrize("large, M, N, K", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=["bf16", "fp32"])
@pytest.mark.parametrize("op", ["gemm", "linear"])
def test_past_2_31_elements(op, dtype, large, M, N, K):
    torch.manual_seed(0)
    a = torch.randn(M, K, device="cuda", dtype=dtype)
    # linear's weight is [N, K]; gemm's b is [K, N]
    b = torch.randn((N, K) if op == "linear" else (K, N), device="cuda", dtype=dtype)
    bias = torch.randn(N, device="cuda", dtype=dtype)
    assert max(M * N, a.numel(), b.numel()) > 2**31
    rows, cols = ends(M), ends(N)
    if op == "linear":
        ref = F.linear(a[rows].double(), b[cols].double(), bias[cols].double())
    else:
        ref = a[rows].double() @ b[:, cols].double()
    ran = []
    for variant in torch_memopt.variants(op, "cuda"):
        try:
            if op == "linear":
                out = torch_memopt.linear(a, b, bias, variant=variant)
            else:
                out = torch_memopt.gemm(a, b, variant=variant)
        except TypeError:
            continue  # the rung does not take this dtype
        assert out.shape == (M, N), f"{variant}: shape {tuple(out.shape)}"
        check_ends(out, ref, rows, cols, f"{op} {variant} {dtype} (large {large})")
        ran.append(variant)
        del out
    torch.cuda.empty_cache()  # the next large test allocates other sizes
    assert ran, f"no {op} variant takes {dtype}"
