"""What the norm / softmax run measures: the shapes (rows×N, reduced over N), the bytes
each call moves, the acceptance target of each row and the calls timed at each."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Mapping

import torch

from tc_gemm.cases import AUTO, Target
from torch_memopt.bench.shapes import work

OPS = ("layer_norm", "rms_norm", "softmax")
EAGER, COMPILE, LIGER = "eager", "compile", "liger"
PEERS = (EAGER, COMPILE, LIGER)
GROUPS = ("bandwidth", "decode")
DTYPES = ("float32", "bfloat16")
_DTYPE_NAMES = {"fp32": "float32", "float32": "float32", "float": "float32",
                "bf16": "bfloat16", "bfloat16": "bfloat16"}

# The bars. From 64 MB moved a call lasts >= 15 us at the copy's ~4.2 TB/s, long
# enough for HBM to be the limit; below it launch and tail effects weigh (ANCHORS.md:
# "judge 4096×1000 in µs"), so those rows are judged against the peers only.
LARGE_BYTES = 64 * 10 ** 6
PCT_COPY = 90.0
# A 131072- or 262144-wide row (0.5 or 1 MiB in fp32) does not fit one SM's 228 KB of
# shared memory: it is re-read or split across blocks, hence the lower bar.
LONG_ROWS = (131072, 262144)
LONG_ROW_PCT_COPY = 85.0
# Over eager and torch.compile (bandwidth rows) or eager (decode rows): at least as fast.
PEER_RATIO = 1.0


@dataclass(frozen=True)
class Case:
    """``op`` over ``rows`` rows of ``N`` elements; ``group`` "decode" rows are judged
    by latency against eager, "bandwidth" rows by GB/s against the copy and the peers."""

    op: str
    rows: int
    N: int
    group: str = "bandwidth"

    def __post_init__(self):
        if self.op not in OPS or self.group not in GROUPS:
            raise ValueError(f"unknown op or group in {self!r}")

    @property
    def decode(self) -> bool:
        return self.group == "decode"

    def shape(self) -> dict[str, int]:
        return {"rows": self.rows, "N": self.N}

    def moved_bytes(self, dtype: str) -> int:
        """Input read + output written (rows·N each) + weight (+ bias) (N each), every
        element in ``dtype``: torch_memopt.bench.shapes.work, the bench's formula."""
        return int(work(self.op, self.shape(), getattr(torch, dtype))[0])

    def target(self, dtype: str) -> Target:
        if self.decode or self.moved_bytes(dtype) < LARGE_BYTES:
            return Target(PEER_RATIO)
        return Target(PEER_RATIO, LONG_ROW_PCT_COPY if self.N in LONG_ROWS else PCT_COPY)

    def shape_label(self) -> str:
        return f"{self.rows}×{self.N}"

    def __str__(self) -> str:
        return f"{self.op} {self.rows}x{self.N}"


NORM_SHAPES = ((32768, 768), (32768, 1024), (16384, 4096), (8192, 8192), (4096, 12288), (4096, 1000))
SOFTMAX_SHAPES = ((32768, 1024), (16384, 4096), (4096, 32768), (1024, 131072), (1024, 262144),
                  (65536, 197), (32768, 1000))
DECODE_ROWS = (1, 8, 64)  # one token, a small batch, a large batch of decode steps
DECODE_N = 4096


def _op_cases(op: str) -> list[Case]:
    shapes = SOFTMAX_SHAPES if op == "softmax" else NORM_SHAPES
    return [Case(op, rows, n) for rows, n in shapes] + \
        [Case(op, rows, DECODE_N, "decode") for rows in DECODE_ROWS]


FULL_CASES = tuple(case for op in OPS for case in _op_cases(op))
QUICK_CASES = (
    Case("layer_norm", 16384, 4096),
    Case("rms_norm", 16384, 4096),
    Case("softmax", 16384, 4096),
    Case("rms_norm", 1, DECODE_N, "decode"),
)


def plan_calls(case: Case, available: Mapping[str, Iterable[str]],
               peer_skips: Mapping[str, str]) -> list[tuple[str, str, str | None]]:
    """(name, kind "peer" | "ours", skip reason or None) for each call at ``case``: the
    peers, then ``auto``, then every other variant that ``available`` (op ->
    ``torch_memopt.variants(op, "cuda")``) lists. ``peer_skips``: peer -> why not run."""
    calls = [(peer, "peer", peer_skips.get(peer)) for peer in PEERS]
    offered = list(available.get(case.op, ()))
    missing = None if AUTO in offered else \
        f"'auto' is not in torch_memopt.variants('{case.op}', 'cuda') on this build and GPU"
    calls.append((AUTO, "ours", missing))
    calls += [(variant, "ours", None) for variant in offered if variant != AUTO]
    return calls


def _names(text: str, known: Mapping[str, str], what: str) -> tuple[str, ...]:
    names = []
    for item in re.split(r"[,\s]+", text.strip()):
        if not item:
            continue
        name = known.get(item.lower())
        if name is None:
            choices = ", ".join(sorted(set(known.values())))
            raise ValueError(f"expected {what} among {choices}, got {item!r}")
        if name not in names:
            names.append(name)
    if not names:
        raise ValueError(f"expected at least one of {what}")
    return tuple(names)


def parse_dtypes(text: str) -> tuple[str, ...]:
    """``fp32,bf16`` (or the torch names) to canonical torch dtype names, in order."""
    return _names(text, _DTYPE_NAMES, "dtypes")


def parse_ops(text: str) -> tuple[str, ...]:
    return _names(text, {op: op for op in OPS}, "ops")
