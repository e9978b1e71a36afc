"""Random tensors of a given shape in the layouts a user hands an op: contiguous,
transposed, sliced with a step, an offset view, expanded along a stride-0 dim, or rows
padded apart. Every value is drawn fresh (never zeros), so a kernel that reads the
wrong element gives a wrong answer."""

from __future__ import annotations

import random

import torch

LAYOUTS = ("contiguous", "transposed", "stepped", "offset", "expanded", "row_padded")


def randn(shape, dtype, device, gen: torch.Generator, scale: float = 1.0) -> torch.Tensor:
    """Normal values drawn in float32 on the CPU (the same values on every device for a
    seed), rounded to dtype."""
    x = torch.randn(shape, generator=gen, dtype=torch.float32) * scale
    return x.to(device=device, dtype=dtype)


def make(shape, dtype, device, layout: str, gen: torch.Generator, scale: float = 1.0) -> torch.Tensor:
    """A tensor of `shape` whose strides are those of `layout` (contiguous where the
    layout cannot apply: a transpose of a 1-D tensor, an expansion of no dim of size 1)."""
    shape = list(shape)
    if layout == "transposed" and len(shape) >= 2:
        swapped = shape[:-2] + [shape[-1], shape[-2]]
        return randn(swapped, dtype, device, gen, scale).transpose(-1, -2)
    if layout == "stepped" and shape and shape[-1] > 0:
        wide = shape[:-1] + [2 * shape[-1]]
        return randn(wide, dtype, device, gen, scale)[..., ::2]
    if layout == "offset" and shape:
        wide = shape[:-1] + [shape[-1] + 3]
        return randn(wide, dtype, device, gen, scale)[..., 1:shape[-1] + 1]
    if layout == "expanded" and len(shape) >= 2 and shape[0] > 1:
        return randn([1] + shape[1:], dtype, device, gen, scale).expand(shape)
    if layout == "row_padded" and len(shape) >= 2:
        wide = shape[:-1] + [shape[-1] + 5]
        return randn(wide, dtype, device, gen, scale)[..., :shape[-1]]
    return randn(shape, dtype, device, gen, scale)


def pick_layout(rng: random.Random) -> str:
    """Contiguous half the time (the common case), one of the others otherwise."""
    return "contiguous" if rng.random() < 0.5 else rng.choice(LAYOUTS[1:])
