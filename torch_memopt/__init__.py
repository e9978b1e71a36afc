"""torch_memopt: memory-hierarchy-optimized inference kernels for PyTorch.

The ops are registered with the PyTorch dispatcher as ``torch.ops.memopt.*``
(gemm, linear, layer_norm, rms_norm, softmax, and the fused add_layer_norm and
add_rms_norm) by the native extension
``torch_memopt._C``; this package adds typed wrappers, the fake (meta) kernels
that make them traceable by ``torch.compile``, and the inference-only autograd
guard. See ``torch_memopt.ops`` for the shapes each op takes.
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

__all__ = [
    "add_layer_norm",
    "add_rms_norm",
    "built_with_cuda",
    "gemm",
    "layer_norm",
    "linear",
    "rms_norm",
    "softmax",
    "variants",
]
__version__ = "0.1.0"
