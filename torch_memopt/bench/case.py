"""A benchmark case: one problem (op, dtype, shape) and the implementations timed on it,
ours and the peers, on the very same inputs. Suites make cases; the runner runs them.

``make_case`` builds the usual kind from ``calls`` (inputs, float64 reference, work and
tolerance of a torch_memopt op); suites with their own kind of problem (the
constant-memory kernels, whole models) fill ``Case`` themselves.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Callable, ContextManager

import torch

from . import calls, peers


@dataclass(frozen=True)
class Impl:
    """One implementation timed at a case: ``kind`` "ours" (a variant, a record each) or
    "peer". ``build`` makes its call (compiling, for torch.compile) or raises
    ``peers.Unavailable``."""

    name: str
    kind: str
    build: Callable[[], Callable]


@dataclass
class Case:
    suite: str
    op: str
    dtype: str
    shape: dict[str, int]
    impls: list[Impl]
    make_inputs: Callable[[], tuple]
    # The float64 truth of one input set; None: the first peer's output is the reference.
    reference: Callable[[tuple], object] | None
    tolerance: float
    flop: float | None = None
    bytes: float | None = None
    label: str = ""  # what the shape is, e.g. "llama-3-8b qkv" or "decode"
    options: dict = field(default_factory=dict)
    # "kernel": flushed CUDA-event medians; "latency": whole calls, interleaved, no flush.
    timing: str = "kernel"
    # Whether fresh input sets may stand in for the first (the Timer cross-check rotates
    # them); False where state outside the inputs was set up from the first set.
    rotates: bool = True
    error: Callable[[object, object], float] = calls.relative_error
    context: Callable[[], ContextManager] = contextlib.nullcontext
    extra: dict = field(default_factory=dict)  # copied into every record of the case

    @property
    def title(self) -> str:
        text = f"{self.op} {self.dtype} {calls.shape_text(self.shape)}"
        return f"{text} ({self.label})" if self.label else text


def ours_impls(op: str, variants: list[str], options: dict) -> list[Impl]:
    return [Impl(v, "ours", lambda v=v: calls.ours(op, v, options)) for v in variants]


def peer_impls(op: str, names: list[str], options: dict, device: torch.device) -> list[Impl]:
    """The peers among ``names`` that serve ``op`` on ``device`` (``peers.serves``)."""
    return [Impl(name, "peer", lambda name=name: peers.build(name, op, options, device))
            for name in names if peers.serves(name, op, device)]


def make_case(suite: str, op: str, dtype: torch.dtype, shape: dict, *, device: torch.device,
              variants: list[str], peer_names: list[str], options: dict | None = None,
              label: str = "", extra: dict | None = None) -> Case:
    """A case of a torch_memopt op: ours at ``variants`` beside ``peer_names``."""
    options = dict(options or {})
    flop, nbytes = calls.work(op, shape, dtype, options)
    context = calls.fp32_matmul_without_tf32 if op in calls.MATMUL_OPS else contextlib.nullcontext
    return Case(
        suite=suite, op=op, dtype=calls.dtype_name(dtype), shape=dict(shape),
        impls=ours_impls(op, variants, options) + peer_impls(op, peer_names, options, device),
        make_inputs=lambda: calls.make_inputs(op, shape, dtype, device, options),
        reference=lambda inputs: calls.reference(op, inputs, options),
        tolerance=calls.tolerance(op, dtype), flop=flop, bytes=nbytes, label=label,
        options=options, context=context, extra=dict(extra or {}),
    )
