"""linear's epilogue activations, value by value: x @ [[1]] puts each input through the
activation alone (K = 1, N = 1, no bias), so every rung's epilogue is checked against
float64 over a dense grid and the edge values, not through a matmul's rounding.

The exact GELU is the one with its own code (common/activation.h: x * erfc(-x / sqrt 2) / 2
through a Chebyshev fit, 3.8e-7 from float64 over [-12, 12] in float32): its tails,
infinities and NaN are where a cheaper formula would drift."""
import pytest
import torch
import torch.nn.functional as F

import torch_memopt
from conftest import DEVICES

ACTIVATIONS = {
    "relu": F.relu,
    "gelu": F.gelu,
    "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"),
    "silu": F.silu,
}
# A dense grid (steps of 0.006) and the edges: zero, tiny and huge values, infinities, NaN.
EDGES = [0.0, 1e-30, -1e-30, 1e30, -1e30, float("inf"), float("-inf"), float("nan")]


def inputs(device: str, dtype: torch.dtype) -> torch.Tensor:
    grid = torch.linspace(-12, 12, 4001, dtype=torch.float64)
    return torch.cat([grid, torch.tensor(EDGES, dtype=torch.float64)]).to(device, dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["float32", "bfloat16"])
@pytest.mark.parametrize("activation", sorted(ACTIVATIONS))
def test_activation_values_match_float64(device, dtype, activation):
    x = inputs(device, dtype)
    ref = ACTIVATIONS[activation](x.double().cpu())
    # float32: a few ulp of the value (the GELU fit's 3.8e-7 absolute at most); bfloat16:
    # the output's rounding, half an ulp (2^-9 relative) and the fp32 error under it.
    rel, floor = (2e-6, 1e-6) if dtype == torch.float32 else (2 ** -8, 1e-6)
    ran = []
    for variant in torch_memopt.variants("linear", device):
        if variant.endswith("_tf32"):
            continue  # tf32 rounds the inputs: not the activation alone
        try:
            out = torch_memopt.linear(x[:, None], torch.ones(1, 1, device=device, dtype=dtype),
                                      activation=activation, variant=variant)
        except TypeError:
            continue  # the rung does not take this dtype
        ran.append(variant)
        out = out.flatten().double().cpu()
        where = f"{activation} {variant} {dtype} on {device}"
        assert torch.equal(out.isnan(), ref.isnan()), f"{where}: NaN where float64 has none"
        finite = ref.isfinite()
        assert torch.equal(out[~finite & ~ref.isnan()], ref[~finite & ~ref.isnan()]), \
            f"{where}: infinities differ"
        err = (out[finite] - ref[finite]).abs()
        bound = rel * ref[finite].abs() + floor
        worst = int((err - bound).argmax())
        assert bool((err <= bound).all()), (
            f"{where}: at x = {x.double().cpu()[finite][worst].item():.6g} got "
            f"{out[finite][worst].item():.9g}, float64 {ref[finite][worst].item():.9g}")
    assert ran, f"no linear variant on {device} takes {dtype}"
