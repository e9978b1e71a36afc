"""The extension's process-wide norm and softmax switches, set for a ``with`` block and
restored after, for the tests, the sanitizer script and the tuning probes. The norms'
(``norm_switches``):

- ``param_stage``: ``_C._set_norm_param_stage``, how the vectorized norm kernel fetches
  weight and bias at small grids: ``LATE`` (or False) after the reductions, ``EARLY`` (or
  True, the default) into registers with the row (up to 256 threads a row, and 512 where a
  parameter's packs take 16 registers a thread, unpeeled), else staged in
  shared memory or prefetched towards L2 where it cannot stage, ``PREFETCH`` prefetched
  only (read late where ``EARLY`` would hold them in registers), ``EARLY_ANY_GRID`` the
  parameters in registers at any grid where the instance holds them there, not one wave
  at most, else prefetched at small grids (the sweep);
- ``peel``: ``_C._set_norm_peel``, which kernel rows off the 16-byte pack take: 0 the
  widest narrow pack that fits, 1 the rule (the default), 2 the peeled kernel;
- ``few_rows``: ``_C._set_norm_few_rows``, the most rows a grid may have for its
  16-byte-pack rows of up to 256 packs to run one pack a thread, any dtype (0: never; -1
  the rule, the default: 512 16-bit rows, 128 fp32 rows);
- ``whole_rows``: ``_C._set_norm_whole_rows``, the most rows a grid may have for rows a
  few packs past a power of two of threads (N = 4100 fp32) to keep every pack in
  registers on twice the threads instead of re-reading the extra ones (0: never; -1 the
  rule, the default: 0 rows for both dtypes).

Softmax's (``softmax_switches``):

- ``few_rows``: ``_C._set_softmax_few_rows``, the same bound for online's 16-byte-pack
  rows of 33-512 packs (0: never; -1 the rule, the default: 512 16-bit rows, no fp32
  rows).

``None`` leaves a switch as it is."""

from __future__ import annotations

import contextlib
from typing import Iterator, Optional

NARROW_PACKS, PEEL_RULE, PEELED = 0, 1, 2
LATE, EARLY, PREFETCH, EARLY_ANY_GRID = 0, 1, 2, 3


@contextlib.contextmanager
def _switched(settings) -> Iterator[None]:
    """Each (setter, value) of ``settings`` whose value is not None set, in order, for the
    block; restored after in reverse order, also when a setter or the block raises."""
    restore = []
    try:
        for setter, value in settings:
            if value is not None:
                restore.append((setter, setter(value)))
        yield
    finally:
        for setter, previous in reversed(restore):
            setter(previous)


def norm_switches(param_stage: Optional[int] = None,
                  peel: Optional[int] = None,
                  few_rows: Optional[int] = None,
                  whole_rows: Optional[int] = None):
    from torch_memopt import _C

    return _switched([(_C._set_norm_param_stage, param_stage), (_C._set_norm_peel, peel),
                      (_C._set_norm_few_rows, few_rows), (_C._set_norm_whole_rows, whole_rows)])


def softmax_switches(few_rows: Optional[int] = None):
    from torch_memopt import _C

    return _switched([(_C._set_softmax_few_rows, few_rows)])


def switches_of(op: str):
    """The switch context of ``op``'s kernels: softmax's, else the norms'."""
    return softmax_switches if op == "softmax" else norm_switches
