"""What the tensor-core acceptance run measures: the shapes, their layouts, the
acceptance target of each, and the rungs that apply to each shape."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Mapping

CUBLAS = "cublas"
AUTO = "auto"
# The half-precision rungs in ladder order (csrc/gemm: mma.sync, wgmma_sm90, gemv,
# splitk_sm90).
HALF_RUNGS = ("mma", "wgmma", "gemv", "splitk")
# auto takes splitk (Hopper) or gemv at or below this M (decode shapes), the wide
# rungs above it.
SKINNY_MAX_M = 64
ELEMENT_BYTES = 2  # bfloat16 and float16

DTYPES = ("bfloat16", "float16")
_DTYPE_NAMES = {"bf16": "bfloat16", "bfloat16": "bfloat16",
                "fp16": "float16", "half": "float16", "float16": "float16"}

GROUPS = ("square", "linear_bias", "odd", "skinny")


@dataclass(frozen=True)
class Target:
    """The acceptance bar of one shape: cuBLAS time / ours at least ``ratio`` and,
    where set, the weight bandwidth at least ``pct_copy`` % of a device copy's."""

    ratio: float
    pct_copy: float | None = None

    def describe(self) -> str:
        text = f"≥ {self.ratio:.2f}×"
        return text if self.pct_copy is None else f"{text}, ≥ {self.pct_copy:.0f}% copy"

    def judge(self, ratio: float | None, pct_copy: float | None) -> str | None:
        """"PASS" when every bar is met, "MISS" when one is not, None when a figure is missing."""
        if ratio is None or (self.pct_copy is not None and pct_copy is None):
            return None
        met = ratio >= self.ratio and (self.pct_copy is None or pct_copy >= self.pct_copy)
        return "PASS" if met else "MISS"

    def as_dict(self) -> dict:
        return {"ratio": self.ratio, "pct_copy": self.pct_copy}

    @classmethod
    def from_dict(cls, data: Mapping) -> "Target":
        return cls(data["ratio"], data.get("pct_copy"))


# The acceptance bars, per group of shapes.
GROUP_TARGETS = {
    "square": Target(1.0),        # 4096³, 8192³: at least cuBLAS
    "linear_bias": Target(0.95),  # cuBLASLt fuses the bias too: within 5 %
    "odd": Target(3.0),           # cuBLAS is weak off multiples of 8 (ANCHORS: 4095³ 4.8x slower)
    "skinny": Target(1.3),        # decode shapes: cuBLAS reads weights at 43 % of copy (ANCHORS)
}
M1_PCT_COPY = 80.0  # M = 1 streams the weights once: at least 80 % of the copy bandwidth


@dataclass(frozen=True)
class Case:
    """One measured problem: out[M, N] from A [M, K] and B in ``layout``.

    ``gemm``: ``torch.mm(a [M, K], b [K, N])``; ``linear``: ``F.linear(x [M, K],
    w [N, K], bias [N] or None)``.
    """

    group: str
    layout: str
    M: int
    N: int
    K: int
    bias: bool = False

    def __post_init__(self):
        if self.group not in GROUPS or self.layout not in ("gemm", "linear"):
            raise ValueError(f"unknown group or layout in {self!r}")
        if self.bias and self.layout != "linear":
            raise ValueError("only the linear layout takes a bias")

    @property
    def flop(self) -> int:
        """One multiply and one add per (m, n, k): 2·M·N·K (the bias add is not counted)."""
        return 2 * self.M * self.N * self.K

    @property
    def weight_bytes(self) -> int:
        """B read once: 2·N·K bytes, what bounds a skinny-M call."""
        return ELEMENT_BYTES * self.N * self.K

    @property
    def input_bytes(self) -> int:
        """One input set (A, B and the bias): what a Timer rotation must push out of L2."""
        return ELEMENT_BYTES * (self.M * self.K + self.N * self.K + (self.N if self.bias else 0))

    @property
    def skinny(self) -> bool:
        return self.M <= SKINNY_MAX_M

    @property
    def op(self) -> str:
        return "gemm" if self.layout == "gemm" else "linear"

    @property
    def target(self) -> Target:
        base = GROUP_TARGETS[self.group]
        return Target(base.ratio, M1_PCT_COPY) if self.group == "skinny" and self.M == 1 else base

    @property
    def rungs(self) -> tuple[str, ...]:
        """``auto`` and the rungs that apply: splitk and gemv at decode shapes, wgmma above
        them, mma at all."""
        return (AUTO, "splitk", "gemv", "mma") if self.skinny else (AUTO, "wgmma", "mma")

    def shape(self) -> dict[str, int]:
        return {"M": self.M, "N": self.N, "K": self.K}

    def shape_label(self) -> str:
        if self.M == self.N == self.K:
            return f"{self.M}³"
        return f"{self.M}×{self.N}×{self.K}"

    def layout_label(self) -> str:
        if self.layout == "gemm":
            return "gemm"
        return "linear+bias" if self.bias else "linear"

    def __str__(self) -> str:
        return f"{self.M}x{self.N}x{self.K} {self.layout_label()}"


def _skinny(n: int, k: int) -> list[Case]:
    return [Case("skinny", "linear", m, n, k) for m in (1, 8, 16, 64)]


FULL_CASES = (
    Case("square", "gemm", 4096, 4096, 4096),
    Case("square", "gemm", 8192, 8192, 8192),
    Case("linear_bias", "linear", 8192, 4096, 4096, bias=True),
    Case("linear_bias", "linear", 8192, 11008, 4096, bias=True),  # a LLaMA-7B MLP up-projection
    Case("odd", "gemm", 4095, 4095, 4095),  # no dim a multiple of 8: TMA needs the aligned copy
    Case("odd", "gemm", 4097, 4096, 4100),  # tails in M and K, K % 8 = 4
    *_skinny(4096, 4096),
    *_skinny(11008, 4096),
)
QUICK_CASES = (
    Case("square", "gemm", 4096, 4096, 4096),
    Case("odd", "gemm", 4095, 4095, 4095),
    Case("skinny", "linear", 1, 4096, 4096),
    Case("skinny", "linear", 1, 11008, 4096),
)


def plan_variants(case: Case, available: Mapping[str, Iterable[str]]) -> list[tuple[str, str | None]]:
    """(variant, skip reason or None) for each of ``case.rungs``; ``available`` maps an
    op to ``torch_memopt.variants(op, "cuda")``."""
    offered = list(available.get(case.op, ()))
    plan = []
    for variant in case.rungs:
        reason = None
        if variant not in offered:
            reason = (f"'{variant}' is not in torch_memopt.variants('{case.op}', 'cuda') "
                      "on this build and GPU")
        plan.append((variant, reason))
    return plan


def parse_dtypes(text: str) -> tuple[str, ...]:
    """``bf16,fp16`` (or the torch names) to canonical torch dtype names, in order."""
    names = []
    for item in re.split(r"[,\s]+", text.strip()):
        if not item:
            continue
        name = _DTYPE_NAMES.get(item.lower())
        if name is None:
            raise ValueError(f"expected dtypes among bf16, fp16 (or bfloat16, float16), got {item!r}")
        if name not in names:
            names.append(name)
    if not names:
        raise ValueError("expected at least one dtype")
    return tuple(names)
