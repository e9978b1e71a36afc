"""``python -m torch_memopt.bench``: time every torch_memopt op against the stock op.

For each op (gemm, linear, layer_norm, rms_norm, softmax), dtype and default shape,
the bench times the stock PyTorch op and each requested variant of ours, in the same
process on the same inputs, and reports the median time per call, the rate (TFLOP/s
for gemm and linear, GB/s of bytes read and written for the rest; the formulas are in
:mod:`.shapes`) and ``speedup_vs_stock`` = stock time / our time, so > 1 means ours
is faster.

How it measures (details in :mod:`.harness`): ``torch.utils.benchmark.Timer`` with
``blocked_autorange``, the median of its blocks, ``Compare`` for the first table. On
CUDA the L2 is flushed by rotation: each call reads the next of several independent
input sets, in turn, together at least twice the L2 size (clamped to 2..16 sets), for
ours and stock alike; on CPU nothing is rotated. fp32 matmuls run with TF32 off, so
the gemm peer is cuBLAS fp32.

Modules, one job each: ``shapes`` (default shapes, FLOP and byte formulas), ``cases``
(inputs, our call, the stock peer), ``harness`` (timing, L2 rotation), ``runner``
(one case end to end), ``report`` (opening line, tables, JSON), ``progress`` (a
stderr progress bar), ``cli`` (arguments and ``main``).
"""
from .cli import main

__all__ = ["main"]
