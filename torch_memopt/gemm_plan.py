"""``gemm_plan(M, N, K, dtype)``: which kernel ``variant="auto"`` runs for a GEMM.

``memopt.gemm`` and ``memopt.linear`` pick a rung by shape, dtype and GPU; the
choice is one C++ function (csrc/gemm/gemm_plan.cpp) that the op's ``auto``
and this wrapper both call, so what it says is what the op launches. The
rules and the H200 sweeps behind them: ``benchmarks/results/tune/wgmma_split_h200.json``,
``benchmarks/results/tune/wgmma_tiles_h200.json`` and docs/perf-notes.md.
"""

from __future__ import annotations

import operator
from typing import TypedDict

import torch

from torch_memopt import _C

_DTYPES = (torch.float32, torch.bfloat16, torch.float16)


class GemmPlan(TypedDict):
    """What ``auto`` runs for one GEMM shape."""

    variant: str  # the rung, as torch_memopt.variants lists it
    splits: int  # K splits over a thread-block cluster (wgmma_split), else 1
    tile: tuple[int, int]  # the output tile of wgmma / wgmma_split, rows x columns ((0, 0): none)
    tiles: int  # output tiles of the rung's tile shape (0: not a tiled rung)
    ctas: int  # blocks the launch asks for (0: not worked out by the plan)
    reason: str  # the rule that chose it


def _dim(name: str, value) -> int:
    try:
        n = operator.index(value)
    except TypeError:
        raise TypeError(f"gemm_plan: {name} must be an int, got {type(value).__name__}") from None
    if n < 1:
        raise ValueError(f"gemm_plan: {name} must be >= 1, got {n}")
    return n


def gemm_plan(
    M: int,
    N: int,
    K: int,
    dtype: torch.dtype = torch.bfloat16,
    *,
    device: torch.device | str | int | None = None,
    capability: tuple[int, int] | None = None,
    sm_count: int | None = None,
    aligned: bool = True,
    tf32: bool | None = None,
    layout: str = "linear",
) -> GemmPlan:
    """The rung ``auto`` runs for ``[M, K] @ [K, N]`` (``linear``: ``M`` tokens,
    weight ``[N, K]``) in ``dtype`` on a CUDA device.

    The device is ``device`` (default: the current CUDA device); without a GPU,
    pass ``capability`` (e.g. ``(9, 0)``) and ``sm_count`` (132 on an H200) to
    ask about one. ``aligned=False`` asks for operands whose rows TMA cannot
    read as they are (a row stride that is not a multiple of 8 elements). ``tf32``:
    whether float32 may be read as tf32 (default: ``torch.backends.cuda.matmul.allow_tf32``,
    the flag the op itself reads); on Hopper ``auto`` then runs ``wgmma_tf32``.
    ``layout``: ``"linear"`` (the weight ``[N, K]``, rows along K: ``linear``'s, and
    ``gemm``'s ``b`` when it is a transposed view) or ``"gemm"`` (``b`` ``[K, N]``
    row-major); decode rows take ``gemv`` on the first only.
    """
    if tf32 is None:
        tf32 = torch.backends.cuda.matmul.allow_tf32
    M, N, K = _dim("M", M), _dim("N", N), _dim("K", K)
    if layout not in ("linear", "gemm"):
        raise ValueError(f"gemm_plan: layout must be 'linear' or 'gemm', got {layout!r}")
    if dtype not in _DTYPES:
        raise TypeError(f"gemm_plan: dtype must be one of float32, bfloat16, float16, got {dtype}")
    k_major = layout == "linear"
    if capability is not None or sm_count is not None:
        if capability is None or sm_count is None:
            raise ValueError("gemm_plan: pass both capability and sm_count, or neither (a CUDA device)")
    else:
        if not torch.cuda.is_available():
            raise RuntimeError(
                "gemm_plan: no CUDA device; pass capability=(major, minor) and sm_count= to ask "
                "about one, e.g. capability=(9, 0), sm_count=132 for an H200"
            )
        dev = torch.device("cuda", torch.cuda.current_device()) if device is None else torch.device(device)
        if dev.type != "cuda":
            raise ValueError(f"gemm_plan: device must be a CUDA device, got {dev}")
        props = torch.cuda.get_device_properties(dev)
        capability, sm_count = (props.major, props.minor), props.multi_processor_count
    return _plan(M, N, K, dtype, capability, sm_count, aligned, k_major, tf32)


def _plan(M, N, K, dtype, capability, sm_count, aligned, k_major, tf32) -> GemmPlan:
    sm_count = _dim("sm_count", sm_count)
    major, minor = capability
    if not 0 <= minor <= 9:
        raise ValueError(f"gemm_plan: capability must be (major, minor) with minor 0-9, got {capability}")
    return _C.gemm_plan(M, N, K, dtype != torch.float32, 10 * major + minor, sm_count, bool(aligned),
                        k_major, bool(tf32))
