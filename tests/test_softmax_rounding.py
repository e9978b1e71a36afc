"""16-bit softmax outputs are rounded once, from float32: every element within one step
(ulp) of its dtype of float64's softmax rounded to that dtype, and the error over the
rows within torch's own 16-bit result's, with a margin. At the widths where a row is
held as loaded and its exponentials taken twice (online's rows of 16384-65536 16-bit
columns, the cluster kernel holding wider ones over 4-8 CTAs). Keeping the
exponentials rounded to 16 bits instead (one MUFU.EX2 an element less) measured 0-2%
faster on an H100 and was dropped (docs/perf-notes.md, 2026-12-06): it would have cost
a second rounding."""

import pytest
import torch

import torch_memopt
from conftest import requires_cuda
from held_rows import fill_rows, held_cluster_run, held_shape
from torch_memopt.bench.calls import relative_error

pytestmark = [requires_cuda, pytest.mark.cuda]

SIGNIFICAND_BITS = {torch.bfloat16: 8, torch.float16: 11}
SMALLEST_STEP = {torch.bfloat16: 2.0 ** -133, torch.float16: 2.0 ** -24}


def ulp(rounded: torch.Tensor) -> torch.Tensor:
    """The spacing of the dtype's values at each element (its subnormal step at zero)."""
    _, exponent = torch.frexp(rounded.double())
    step = torch.ldexp(torch.ones_like(rounded, dtype=torch.float64),
                       exponent - SIGNIFICAND_BITS[rounded.dtype])
    smallest = SMALLEST_STEP[rounded.dtype]
    return torch.where(rounded == 0, smallest, step.clamp_min(smallest))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("n", [20000, 32768, 65536, 131072, 256000])
def test_within_one_step_of_the_exact_softmax(dtype, n):
    """20000 / 32768 / 65536: online with the row kept as loaded; 131072 / 256000 with
    enough rows to fill the SMs: held over a cluster (the kernel is checked)."""
    rows = 8 if n <= 65536 else fill_rows(n)
    x = torch.randn(rows, n, device="cuda", dtype=dtype) * 3
    if n > 65536:
        assert held_cluster_run(lambda: torch_memopt.softmax(x, -1)) == held_shape(n)
    exact = torch.softmax(x.double(), -1)
    rounded = exact.to(dtype)
    out = torch_memopt.softmax(x, -1)
    steps = (out.double() - rounded.double()).abs() / ulp(rounded)
    assert steps.max().item() <= 1, (n, steps.max().item())
    assert relative_error(out, exact) <= 1.25 * relative_error(torch.softmax(x, -1), exact), n
