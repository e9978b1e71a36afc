"""The suites of ``python -m torch_memopt.bench``: one module each, found by name.

A suite module has ``NAME``, ``TITLE`` (one line) and ``ABOUT`` (the paragraph that
introduces its table in docs/results.md), and ``cases(ctx) -> list[Case]``. Optional:
``COLUMNS`` (extra table columns), ``SUMMARY_VARIANT`` (the variant its summary line
judges; "auto" unless set; None: every one), ``LAYOUT`` ("records": a row a record, the
default; "cases": a row a case, every variant's time side by side), ``finish(records)`` (figures across a case's variants, such
as speed-up over naive), ``sections(ctx) -> dict`` (suite-wide tables for the JSON) and
``TIMING`` (how the suite times, where it is not the kernel timer's flushed medians),
``digest(records, meta) -> str`` (the table its issue states targets in, under the suite's
table in docs/results.md; ``meta`` is the run's: the copy ceiling, the launch floor).
A new benchmark is a new module here plus a line in ``SUITES``, never a new harness.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

import torch_memopt

from . import (add_norm, constant_memory, e2e, gemm_ladder, models, norm_grid, norms, ops,
               tensor_core, transformer_gemm)

SUITES = {module.NAME: module for module in
          (models, ops, gemm_ladder, tensor_core, transformer_gemm, norms, add_norm,
                norm_grid, constant_memory, e2e)}
DEFAULT = models.NAME


@dataclass
class Context:
    """What the command line asked of every suite: the device, --quick, and the filters
    (None: the suite's own choice)."""

    device: torch.device
    quick: bool
    dtypes: list[torch.dtype] | None = None
    ops: list[str] | None = None
    variants: list[str] | None = None
    peers: list[str] | None = None

    @property
    def cuda(self) -> bool:
        return self.device.type == "cuda"

    def pick_dtypes(self, default: list[torch.dtype],
                    on_request: tuple[torch.dtype, ...] = ()) -> list[torch.dtype]:
        """The suite's ``default`` dtypes that ``--dtype`` keeps, and those of ``on_request``
        it names (dtypes a suite times only when asked: outside its committed grid)."""
        if not self.dtypes:
            return list(default)
        return [d for d in (*default, *on_request) if d in self.dtypes]

    def wants_op(self, op: str) -> bool:
        return self.ops is None or op in self.ops

    def pick_peers(self, default: list[str]) -> list[str]:
        """The suite's ``default`` peers that ``--peers`` keeps. Never torch.compile on the
        CPU: Inductor builds C++ for every graph there (30 s for the small Llama on two
        cores), to time reference kernels. Peers that have no op on this device drop out
        later, case by case (``peers.serves``)."""
        chosen = [p for p in default if p in self.peers] if self.peers else list(default)
        return chosen if self.cuda else [p for p in chosen if p != "compile"]

    def pick_variants(self, op: str, default: list[str] | None = None) -> list[str]:
        """Our variants of ``op`` to time: ``--variant`` (``all``: every one this build and
        device offer) or the suite's ``default`` (``auto`` when None). Only those
        ``torch_memopt.variants`` lists are kept."""
        available = torch_memopt.variants(op, self.device)
        wanted = self.variants or default or ["auto"]
        if "all" in wanted:
            return list(available)
        return [v for v in wanted if v in available]

