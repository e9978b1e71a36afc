"""Softmax's two launches of online's 16-byte-pack rows of 33-512 packs (issue 17): one
pack a thread over 128-512 threads (by the rule 16-bit grids of up to 512 rows; any grid
through ``_C._set_softmax_few_rows``) and four packs a thread over 16-128, each forced on
the same inputs: against float64, with a float32 output from 16-bit input, peeled widths
and strided rows; NaN, inf, all -inf and finfo.min-masked rows as torch.softmax has them;
each launch bit-equal from run to run; and auto taking the launch the rule names."""

import re

import pytest
import torch

import torch_memopt
from conftest import requires_cuda
from cuda_kernels import the_kernel
from torch_memopt.bench.calls import relative_error

TOLERANCE = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1e-2}
# (dtype, rows, N): 264 bf16 the narrowest row the one-pack launch takes (33 packs, 128
# threads), 1000 / 2048 issue 17's widths (125 / 256 packs bf16, 250 / 512 fp32: the
# 128-, 256- and 512-thread instances), 4096 bf16 the widest (512 packs), 2050 and 1001
# peeled (rows off the 16-byte pack), 256 bf16 (32 packs) and 4104 bf16 (513) on either
# side of what it takes, 300 x 2048 bf16 past the norms' fp32 bound, fp16 at 127 rows.
CASES = [(torch.bfloat16, 1, 264), (torch.bfloat16, 8, 1000), (torch.bfloat16, 64, 2048),
         (torch.float32, 7, 1000), (torch.float32, 1, 2048), (torch.bfloat16, 3, 4096),
         (torch.bfloat16, 5, 2050), (torch.float32, 9, 1001), (torch.bfloat16, 2, 256),
         (torch.bfloat16, 2, 4104), (torch.bfloat16, 300, 2048), (torch.float16, 127, 1024)]
ONE_PACK, FOUR_PACKS = 1 << 40, 0


def both_launches(fn):
    """fn() under each launch, forced: {bound: output}."""
    from torch_memopt.testing.switches import softmax_switches

    outputs = {}
    for bound in (ONE_PACK, FOUR_PACKS):
        with softmax_switches(few_rows=bound):
            outputs[bound] = fn()
    return outputs


@requires_cuda
@pytest.mark.cuda
def test_one_pack_and_four_packs_a_thread_both_match_float64():
    failures = []
    for dtype, rows, n in CASES:
        x = torch.randn(rows, n, device="cuda", dtype=dtype) * 4
        ref = torch.softmax(x.double(), -1)
        for out_dtype in (None, torch.float32):
            outputs = both_launches(lambda: torch_memopt.softmax(x, -1, out_dtype))
            for bound, out in outputs.items():
                err = relative_error(out, ref)
                if out.dtype != (out_dtype or dtype) or not err < TOLERANCE[out_dtype or dtype]:
                    failures.append(f"{dtype} {rows}x{n} -> {out.dtype}, few-rows bound {bound}:"
                                    f" relative error {err:.2e}")
    assert not failures, "\n".join(failures)


@requires_cuda
@pytest.mark.cuda
@pytest.mark.parametrize("n, width", [(2048, 2064), (2050, 2053)])
def test_strided_rows_read_in_place_by_both_launches(n, width):
    # Every other row of a wider buffer: rows 2 x width apart, read in place. 2048 in rows
    # of whole packs (online); 2050 off the pack, each row as far off a 16-byte boundary as
    # the output's same row (2 x 2053 - 2050 = 2056 elements, whole packs), so peeled.
    base = torch.randn(16, width, device="cuda", dtype=torch.bfloat16) * 4
    x = base[::2, :n]
    ref = torch.softmax(x.double(), -1)
    for bound, out in both_launches(lambda: torch_memopt.softmax(x, -1)).items():
        err = relative_error(out, ref)
        assert err < TOLERANCE[torch.bfloat16], f"bound {bound}: relative error {err:.2e}"


@requires_cuda
@pytest.mark.cuda
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_nan_inf_masked_and_all_minus_inf_rows_match_torch(dtype):
    x = torch.randn(6, 2048, device="cuda", dtype=dtype)
    x[1, 7] = float("nan")
    x[2, 3] = float("inf")
    x[3] = float("-inf")
    x[4, ::2] = float("-inf")
    x[5, 100:] = torch.finfo(dtype).min  # an attention mask's fill
    expected = torch.softmax(x.double(), -1)
    for bound, out in both_launches(lambda: torch_memopt.softmax(x, -1)).items():
        label = f"{dtype}, few-rows bound {bound}"
        assert torch.equal(out.isnan(), expected.isnan()), f"{label}: NaN pattern differs"
        finite = expected.isfinite()
        assert torch.allclose(out[finite].double(), expected[finite], rtol=TOLERANCE[dtype],
                              atol=1e-6), label


@requires_cuda
@pytest.mark.cuda
def test_each_launch_is_bit_equal_run_to_run():
    x = torch.randn(8, 2048, device="cuda", dtype=torch.bfloat16) * 4
    first = both_launches(lambda: torch_memopt.softmax(x, -1))
    second = both_launches(lambda: torch_memopt.softmax(x, -1))
    for bound in first:
        assert torch.equal(first[bound], second[bound]), f"few-rows bound {bound}: runs differ"



# (dtype, rows, N, one pack a thread): the rule's bounds (softmax_common.h) are 512 16-bit
# rows (kSoftmaxFewRows16) and no fp32 rows (kSoftmaxFewRows32 = 0, which timed no faster).
RULE_CASES = [(torch.bfloat16, 1, 2048, True), (torch.bfloat16, 512, 1000, True),
              (torch.float16, 64, 2050, True), (torch.bfloat16, 513, 2048, False),
              (torch.float32, 8, 2048, False), (torch.float32, 1, 1000, False)]
# softmax_online_kernel<in, out, threads, packs a thread, raw, pack bytes, peeled>
ONLINE = re.compile(r"softmax_online_kernel<[^<>]*?, (\d+), (\d+), (?:true|false), 16, "
                    r"(?:true|false)>")


@requires_cuda
@pytest.mark.cuda
@pytest.mark.parametrize("dtype, rows, n, one_pack", RULE_CASES)
def test_auto_takes_one_pack_a_thread_where_the_rule_says(dtype, rows, n, one_pack):
    x = torch.randn(rows, n, device="cuda", dtype=dtype)
    found = the_kernel(lambda: torch_memopt.softmax(x, -1), ONLINE, "online's 16-byte kernel")
    assert (found.group(2) == "1") == one_pack, \
        f"one pack a thread expected {one_pack}: {found.string}"
    err = relative_error(torch_memopt.softmax(x, -1), torch.softmax(x.double(), -1))
    assert err < TOLERANCE[dtype], f"relative error {err:.2e}"
