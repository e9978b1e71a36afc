"""The FP32 GEMM ladder's rung names, what the published ladder claims for them,
the benchmark sizes and the FLOP formula."""
from __future__ import annotations

import re
from typing import Iterable, NamedTuple

# Ladder order, bottom to top: each rung adds one memory optimization to the one
# below it (csrc/gemm/kernels/v01_naive.cuh ... v08_warptiled.cuh).
LADDER = (
    "naive",
    "coalesced",
    "smem_tiled",
    "smem_padded",
    "double_buffered",
    "register_blocked",
    "vectorized",
    "warptiled",
)
AUTO = "auto"
CUBLAS = "cublas"

# The published ladder we start from (ANCHORS.md), speed-up over its naive kernel:
# coalescing 1.8x, + shared-memory tiles 3.2x, + double buffering 4.5x,
# + register accumulation and float4 loads 6.1x. Rungs it has no figure for are absent.
PUBLISHED_SPEEDUP = {
    "coalesced": 1.8,
    "smem_tiled": 3.2,
    "double_buffered": 4.5,
    "vectorized": 6.1,
}


class Size(NamedTuple):
    M: int
    N: int
    K: int

    def __str__(self) -> str:
        return f"{self.M}x{self.N}x{self.K}"

    @property
    def flop(self) -> int:
        """One multiply and one add per (m, n, k): 2·M·N·K."""
        return 2 * self.M * self.N * self.K

    @property
    def fp32_bytes(self) -> int:
        """The compulsory HBM traffic: read A and B once, write C once, 4 bytes each."""
        return 4 * (self.M * self.K + self.K * self.N + self.M * self.N)

    def as_dict(self) -> dict[str, int]:
        return {"M": self.M, "N": self.N, "K": self.K}


DEFAULT_SIZES = (
    Size(1024, 1024, 1024),
    Size(2048, 2048, 2048),
    Size(4096, 4096, 4096),
    Size(8192, 8192, 8192),
    Size(8192, 4096, 4096),
    Size(4095, 4095, 4095),  # no dimension a multiple of any tile: every tail path runs
)
QUICK_SIZES = (Size(1024, 1024, 1024), Size(4096, 4096, 4096))
NCU_SIZE = Size(4096, 4096, 4096)


def parse_size(text: str) -> Size:
    """``4096`` (cube) or ``MxNxK`` (``x``, ``X`` or ``×`` between)."""
    parts = re.split(r"[x×X]", text.strip())
    if len(parts) == 1:
        parts = parts * 3
    if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise ValueError(f"expected a size like 4096 or 8192x4096x4096, got {text!r}")
    return Size(*(int(p) for p in parts))


def parse_sizes(text: str) -> tuple[Size, ...]:
    """A comma-separated list of ``parse_size`` items."""
    return tuple(parse_size(item) for item in text.split(",") if item.strip())


def order_rungs(available: Iterable[str]) -> list[str]:
    """The ladder's rungs this build offers, in ladder order; unknown extras after them,
    ``auto`` last (it is a choice among the others, not a rung)."""
    available = list(available)
    ordered = [r for r in LADDER if r in available]
    ordered += [r for r in available if r not in LADDER and r != AUTO]
    if AUTO in available:
        ordered.append(AUTO)
    return ordered


def select_rungs(available: Iterable[str], requested: Iterable[str] | None) -> list[str]:
    """``requested`` (in ladder order) after checking each is available; all when None."""
    ordered = order_rungs(available)
    if requested is None:
        return ordered
    requested = [r.strip() for r in requested if r.strip()]
    unknown = [r for r in requested if r not in ordered]
    if unknown:
        raise ValueError(
            f"unknown or unavailable gemm variant(s) {', '.join(unknown)}; "
            f"this build and GPU offer: {', '.join(ordered) or 'none'}"
        )
    return [r for r in ordered if r in requested]
