"""torch_memopt: memory-hierarchy-optimized inference kernels for PyTorch.

The ops are registered with the PyTorch dispatcher as ``torch.ops.memopt.*``
(gemm, linear, layer_norm, rms_norm, softmax, and the fused add_layer_norm and
add_rms_norm) by the native extension
``torch_memopt._C``; this package adds typed wrappers and the fake (meta) kernels
that make them traceable by ``torch.compile`` (``torch_memopt.ops``), drop-in
modules (``torch_memopt.nn``), and ``optimize_(model)`` / ``enable()`` to use them
in a model you already have (``torch_memopt.patch``).
"""

from torch_memopt.ops import (
    add_layer_norm,
    add_rms_norm,
    built_with_cuda,
    gemm,
    layer_norm,
    linear,
    rms_norm,
    softmax,
    variants,
)
from torch_memopt import nn
from torch_memopt.gemm_plan import gemm_plan
from torch_memopt.kernel_info import kernel_info
from torch_memopt._routing import use_cpu_kernels
from torch_memopt.patch import enable, last_report, optimize_

import torch.distributed as _distributed

if _distributed.is_available():
    # DTensor sharding rules for the ops (tensor-parallel models, issue 19). A torch
    # without DTensor's register_sharding (before 2.5) keeps the ops working elsewhere.
    try:
        from torch_memopt import sharding  # noqa: F401
    except ImportError as _exc:
        import warnings as _warnings

        _warnings.warn(f"torch_memopt: no DTensor sharding rules ({_exc}); memopt ops on "
                       "DTensors will raise", stacklevel=2)

__all__ = [
    "add_layer_norm",
    "add_rms_norm",
    "built_with_cuda",
    "enable",
    "gemm",
    "gemm_plan",
    "kernel_info",
    "last_report",
    "layer_norm",
    "linear",
    "nn",
    "optimize_",
    "rms_norm",
    "softmax",
    "use_cpu_kernels",
    "variants",
]
__version__ = "0.1.0"
