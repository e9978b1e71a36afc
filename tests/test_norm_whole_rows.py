"""The norms' rows a few packs past a power of two of threads (norm_vectorized_launch.cuh's
row_threads): N = 4100 fp32 is 1025 16-byte packs, which 256 threads of four packs hold but
one. Counted down, 256 threads re-read the extra pack; kept whole
(``_C._set_norm_whole_rows`` forcing it), 512 threads hold every pack. Both launches of
every op are checked for their thread count and against float64 (the fused adds' sums as
well), at one row and at a grid past the bound."""

import re

import pytest
import torch

from conftest import requires_cuda
from cuda_kernels import the_kernel
from torch_memopt.bench import calls
from torch_memopt.testing.switches import norm_switches

ALWAYS, NEVER = 1 << 40, 0
# norm_vectorized_kernel<scalar_t, param_t, kRms, kThreads, ...>
THREADS = re.compile(r"norm_vectorized_kernel<float, float, (?:true|false), (\d+),")


@requires_cuda
@pytest.mark.cuda
@pytest.mark.parametrize("rows", [1, 300])
@pytest.mark.parametrize("whole, threads", [(NEVER, "256"), (ALWAYS, "512")],
                         ids=["counted-down", "whole"])
@pytest.mark.parametrize("op", ["rms_norm", "layer_norm", "add_rms_norm", "add_layer_norm"])
def test_a_row_a_pack_past_256_threads(op, whole, threads, rows):
    inputs = calls.make_inputs(op, calls.rows_shape(rows, 4100), torch.float32, "cuda", {})
    ours = calls.ours(op, "auto", {})
    with norm_switches(whole_rows=whole):
        found = the_kernel(lambda: ours(*inputs), THREADS, "the vectorized kernel")
        out = ours(*inputs)
    assert found.group(1) == threads, f"expected {threads} threads a row: {found.string}"
    err = calls.relative_error(out, calls.reference(op, inputs, {}))
    assert err < calls.tolerance(op, torch.float32), f"relative error {err:.2e}"
