"""Which kernel auto gives norm rows off the 16-byte pack (norm_narrow_packs.cu's
take_peel): the peeled rows (16-byte packs between single elements) wherever they fit,
except rows that 8-byte packs fit in grids past 64 16-bit rows or past one fp32 row, which
take those (timed at 1-64 rows: benchmarks/results/tune/norm_peel_few_rows_d2b8c50_h100.json);
16-bit rms_norm peels at any grid. Each choice checked against float64 too (the fused
adds' sums as well)."""

import re

import pytest
import torch

from conftest import requires_cuda
from cuda_kernels import the_kernel
from torch_memopt.bench import calls

# (op, dtype, rows, N, peeled): 4100 bf16 and 2050 fp32 rows fit 8-byte packs; 2050 bf16
# rows fit 4-byte packs only, which the peel beats at any grid.
CASES = [("layer_norm", torch.bfloat16, 1, 4100, True),
         ("add_rms_norm", torch.bfloat16, 64, 4100, True),
         ("add_layer_norm", torch.bfloat16, 65, 4100, False),
         ("layer_norm", torch.bfloat16, 512, 2050, True),
         ("rms_norm", torch.bfloat16, 4096, 4100, True),
         ("add_layer_norm", torch.float32, 1, 2050, True),
         ("rms_norm", torch.float32, 2, 2050, False)]
# norm_vectorized_kernel<..., pack bytes, peeled, early parameters>
VECTORIZED = re.compile(r"norm_vectorized_kernel<[^<>]*?, (\d+), (true|false), (?:true|false)>")


@requires_cuda
@pytest.mark.cuda
@pytest.mark.parametrize("op, dtype, rows, n, peeled", CASES)
def test_auto_peels_where_the_rule_says(op, dtype, rows, n, peeled):
    inputs = calls.make_inputs(op, calls.rows_shape(rows, n), dtype, "cuda", {})
    ours = calls.ours(op, "auto", {})
    found = the_kernel(lambda: ours(*inputs), VECTORIZED, "the vectorized kernel")
    expected = ("16", "true") if peeled else ("8", "false")
    assert found.groups() == expected, f"(pack bytes, peeled) expected {expected}: {found.string}"
    err = calls.relative_error(ours(*inputs), calls.reference(op, inputs, {}))
    assert err < calls.tolerance(op, dtype), f"relative error {err:.2e}"
