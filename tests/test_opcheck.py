"""torch.library.opcheck on every op: schema, fake kernel against the real one
(shapes, dtypes, strides), autograd registration, and AOT dispatch with
dynamic shapes."""

import pytest
import torch

from samples import sample_inputs

OPS = ["gemm", "linear", "layer_norm", "rms_norm", "softmax"]
# A few cases per op keep the run short; the shapes still cover odd sizes,
# strided inputs and, for softmax, a dtype change.
CASES_PER_OP = 4


@pytest.mark.parametrize("op", OPS)
def test_opcheck(op, device, dtype):
    overload = getattr(torch.ops.memopt, op).default
    for case in sample_inputs(op, device, dtype)[:CASES_PER_OP]:
        torch.library.opcheck(overload, case.args, case.kwargs)
