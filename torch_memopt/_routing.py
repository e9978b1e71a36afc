"""When a call can go to a memopt op, shared by the drop-in modules (nn.py) and the
function mode (patch.py): the one place that says which devices, dtypes and autograd
states memopt takes, so a module and the mode never disagree.

memopt's kernels are inference-only and exist for float32, float16 and bfloat16 on
CUDA (when this build has CUDA kernels) and on the CPU. The CPU kernels are reference
kernels, correct but not fast, so calls on CPU tensors go to the stock op unless
``use_cpu_kernels()`` is active (tests, and CPU-only builds that want to exercise the
ops).

DTensors (tensor-parallel models) pass through the same checks: their dtype, device
type and ``requires_grad`` are their local shards', and the op then runs under the
sharding rules of torch_memopt/sharding.py, which take any placement (redistributing
where no rule fits).
"""
from __future__ import annotations

import contextlib
from typing import Iterator, Optional

import torch

from torch_memopt.ops import built_with_cuda

DTYPES = (torch.float32, torch.float16, torch.bfloat16)

# Plain module globals, read on every call: torch.compile traces them (and guards on
# them), where a thread-local or a call into the extension would break the graph.
_CUDA_KERNELS = built_with_cuda()
_cpu_kernels = False


@contextlib.contextmanager
def use_cpu_kernels(enabled: bool = True) -> Iterator[None]:
    """Route CPU tensors to memopt's CPU reference kernels inside the block (by default
    they go to the stock op, which is faster on a CPU). Process-wide, not per thread."""
    global _cpu_kernels
    previous, _cpu_kernels = _cpu_kernels, enabled
    try:
        yield
    finally:
        _cpu_kernels = previous


def grad_needed(*tensors: Optional[torch.Tensor]) -> bool:
    """Whether autograd would record this call: memopt has no backward, so such calls
    stay on the stock op (training keeps working)."""
    return torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors)


def routable(input: torch.Tensor, *params: Optional[torch.Tensor],
             fp32_params: bool = False) -> bool:
    """Whether memopt takes a call on ``input`` and ``params`` (None entries are absent
    optional arguments): a float32 / float16 / bfloat16 input on a device with memopt
    kernels, params on the same device in its dtype (or float32 with ``fp32_params``, as
    the norms take them), and no gradient needed. Shape and argument checks specific to
    an op are the caller's.

    It runs on every forward of every module, so it reads only cheap attributes
    (``is_cuda``, ``get_device()``: no torch.device objects are built)."""
    dtype = input.dtype
    if dtype not in DTYPES:
        return False
    if input.is_cuda:
        if not _CUDA_KERNELS:
            return False
    elif not (_cpu_kernels and input.device.type == "cpu"):
        return False
    grad = torch.is_grad_enabled()
    if grad and input.requires_grad:
        return False
    where = input.get_device()
    for p in params:
        if p is None:
            continue
        if (grad and p.requires_grad) or p.get_device() != where:
            return False
        if p.dtype != dtype and not (fp32_params and p.dtype == torch.float32):
            return False
    return True
