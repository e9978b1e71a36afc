"""``kernel_info(op, variant)``: the resources of the kernels a rung runs.

What ``ptxas -v`` prints at build time (registers, shared and local memory),
read at run time from the loaded kernels through ``cudaFuncGetAttributes``, so
that occupancy questions ("does the 1024-thread LayerNorm spill?") can be
answered from Python, on the GPU at hand, without a build log or cuobjdump.
"""

from __future__ import annotations

from typing import TypedDict

from torch_memopt import _C
from torch_memopt.ops import OPS


class KernelInfo(TypedDict):
    """One compiled kernel of a variant, as ``cudaFuncGetAttributes`` reports it."""

    label: str
    registers: int
    static_shared_bytes: int
    local_bytes: int
    max_threads_per_block: int
    max_dynamic_shared_bytes: int


def kernel_info(op: str, variant: str) -> list[KernelInfo]:
    """The resource use of the kernels variant ``variant`` of ``op`` runs on CUDA.

    A variant runs different template instantiations for different dtypes and
    shapes; the list holds the ones ``auto`` and the benchmarks use (each
    launcher file registers them at its end, e.g. csrc/norm/norm_cuda.cu), one
    dict each, in ladder order. ``gemm`` lists the kernels for a row-major
    ``b`` [K, N], ``linear`` those for its weight [N, K]. Keys:

    - ``label``: which instantiation, e.g. ``"bfloat16, 256 threads a row,
      4 packs a thread"``.
    - ``registers``: registers a thread (ptxas's "Used N registers"; at most
      255). Times the block's threads, against the SM's 65536, it caps the
      blocks an SM holds.
    - ``static_shared_bytes``: the kernel's ``__shared__`` arrays ("smem");
      shared memory given at launch (dynamic) comes on top.
    - ``local_bytes``: a thread's local memory: register spills and arrays
      indexed at run time ("spill stores", "stack frame"). Above 0 means
      traffic through L1 and L2 that registers would have avoided.
    - ``max_threads_per_block``: the largest block it can launch with, as its
      ``__launch_bounds__`` and register count allow.
    - ``max_dynamic_shared_bytes``: the most dynamic shared memory it can be
      launched with now: 48 KB less the static part, or what its launcher
      opted in to (``cudaFuncAttributeMaxDynamicSharedMemorySize``) once it
      has run.

    Numbers are for the current CUDA device. Raises ValueError for an unknown
    op or variant (``"auto"`` included: name the rung), RuntimeError on a
    build without CUDA kernels or a machine without a CUDA GPU.
    """
    if op not in OPS:
        raise ValueError(f"torch_memopt.kernel_info: unknown op {op!r}; ops: {', '.join(OPS)}")
    return _C.kernel_info(op, variant)
