"""The norms' two launches of a 16-byte-pack row of up to 256 packs (issue 17): one pack
a thread over 128-256 threads (grids of up to 512 16-bit or 128 fp32 rows by default;
any bound through ``_C._set_norm_few_rows``) and four packs a thread over 32-64, each
forced on grids on both sides of the bound, every op, peeled and aligned widths, fp32 and
16-bit parameters: both against float64, and the fused adds' sums exactly the dtype's
sum."""

import pytest
import torch
import torch.nn.functional as F

import torch_memopt
from conftest import requires_cuda

TOLERANCE = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1e-2}
OPS = ["rms_norm", "layer_norm", "add_rms_norm", "add_layer_norm"]
# (dtype, parameter dtype, rows, N): 8 and 2048 the narrowest and widest 16-bit rows the
# one-pack launch takes (1 and 256 packs), 2050 peeled, 1000 fp32 (250 packs), 1032 bf16
# (129 packs: the 256-thread instance with threads idle), 4097 none (past 256 packs).
CASES = [(torch.bfloat16, torch.bfloat16, 1, 8), (torch.bfloat16, torch.bfloat16, 65, 2048),
         (torch.float16, torch.float32, 300, 2050), (torch.float32, torch.float32, 7, 1000),
         (torch.bfloat16, torch.float32, 129, 1032), (torch.float32, torch.float32, 1, 4097),
         (torch.bfloat16, torch.bfloat16, 2000, 768)]
ONE_PACK, FOUR_PACKS = 1 << 40, 0


def run(op, x, r, weight, bias, eps):
    n = x.shape[-1]
    if op == "rms_norm":
        return torch_memopt.rms_norm(x, [n], weight, eps), None
    if op == "layer_norm":
        return torch_memopt.layer_norm(x, [n], weight, bias, eps), None
    if op == "add_rms_norm":
        return torch_memopt.add_rms_norm(x, r, [n], weight, eps)
    return torch_memopt.add_layer_norm(x, r, [n], weight, bias, eps)


def reference(op, x, r, weight, bias, eps):
    s = x + r if op.startswith("add_") else x  # the sum rounded to the dtype, as stock code does
    n = x.shape[-1:]
    if op.endswith("layer_norm"):
        out = F.layer_norm(s.double(), n, weight.double(), bias.double(), eps)
    else:
        out = F.rms_norm(s.double(), n, weight.double(), eps)
    return out, s


@requires_cuda
@pytest.mark.cuda
@pytest.mark.parametrize("op", OPS)
def test_one_pack_and_four_packs_a_thread_both_match_float64(op):
    from torch_memopt.testing.switches import norm_switches

    for dtype, pdtype, rows, n in CASES:
        x = torch.randn(rows, n, device="cuda", dtype=dtype) + 2
        r = torch.randn(rows, n, device="cuda", dtype=dtype)
        weight = torch.randn(n, device="cuda", dtype=pdtype)
        bias = torch.randn(n, device="cuda", dtype=pdtype)
        ref_out, ref_sum = reference(op, x, r, weight, bias, 1e-5)
        for bound in (ONE_PACK, FOUR_PACKS):
            label = f"{op} {dtype} x {pdtype} {rows}x{n} few-rows bound {bound}"
            with norm_switches(few_rows=bound):
                out, s = run(op, x, r, weight, bias, 1e-5)
            err = ((out.double() - ref_out).norm() / ref_out.norm()).item()
            assert err < TOLERANCE[dtype], f"{label}: relative error {err:.2e}"
            if s is not None:
                assert torch.equal(s, ref_sum), f"{label}: the sum differs from x + residual"

