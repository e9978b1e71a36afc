"""Drop-in modules: ``Linear``, ``LayerNorm``, ``RMSNorm`` and ``Softmax`` with the
constructor arguments, parameters and state_dict keys of their ``torch.nn`` twins
(each is a subclass of it), whose forward runs the memopt op when it can take the call
and the stock functional otherwise (``_routing.routable``: dtype, device, and no
gradient needed, since memopt is inference-only; training through these modules runs
the stock ops).

``Module.from_module(m)`` builds one around an existing torch module, sharing its
parameters (no copy); ``variant`` picks a rung of the op's ladder (default ``auto``)
and shows in ``repr``.
"""
from __future__ import annotations

from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn

from torch_memopt import ops
from torch_memopt._routing import routable


def _adopt(cls, module: nn.Module, variant: str):
    """An instance of ``cls`` (a subclass of ``type(module)``'s torch.nn class) that
    shares ``module``'s parameters, buffers and attributes: ``__dict__`` is copied
    shallowly, so the Parameter objects are the same (loading a state_dict into either
    updates both) and hooks registered on ``module`` stay on."""
    new = cls.__new__(cls)
    # Own copies of the dicts (parameters, buffers, hooks), the same objects in them.
    new.__dict__ = {k: type(v)(v) if isinstance(v, dict) else v for k, v in module.__dict__.items()}
    new.variant = variant
    return new


class _DropIn:
    """What every drop-in shares: ``from_module`` (wrap a torch module, sharing its
    parameters) and the variant in ``repr``. Listed before the torch class, so
    ``super().extra_repr()`` is the twin's own."""

    variant: str

    @classmethod
    def from_module(cls, module: nn.Module, *, variant: str = "auto"):
        return _adopt(cls, module, variant)

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, variant={self.variant!r}"


class Linear(_DropIn, nn.Linear):
    """``torch.nn.Linear`` on ``memopt::linear`` (any leading dims, bias fused)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None, *, variant: str = "auto") -> None:
        super().__init__(in_features, out_features, bias, device, dtype)
        self.variant = variant

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        if input.dim() >= 1 and routable(input, self.weight, self.bias):
            return ops.linear(input, self.weight, self.bias, variant=self.variant)
        return F.linear(input, self.weight, self.bias)


class LayerNorm(_DropIn, nn.LayerNorm):
    """``torch.nn.LayerNorm`` on ``memopt::layer_norm``."""

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None, *, variant: str = "auto") -> None:
        super().__init__(normalized_shape, eps, elementwise_affine, bias, device, dtype)
        self.variant = variant

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        if routable(input, self.weight, self.bias, fp32_params=True):
            return ops.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps,
                                  variant=self.variant)
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)


class RMSNorm(_DropIn, nn.RMSNorm):
    """``torch.nn.RMSNorm`` on ``memopt::rms_norm``."""

    def __init__(self, normalized_shape, eps: Optional[float] = None,
                 elementwise_affine: bool = True, device=None, dtype=None, *,
                 variant: str = "auto") -> None:
        super().__init__(normalized_shape, eps, elementwise_affine, device, dtype)
        self.variant = variant

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        if routable(input, self.weight, fp32_params=True):
            return ops.rms_norm(input, self.normalized_shape, self.weight, self.eps,
                                variant=self.variant)
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)


class Softmax(_DropIn, nn.Softmax):
    """``torch.nn.Softmax`` on ``memopt::softmax``. ``dim=None`` (torch's deprecated
    implicit dim) stays on the stock op, which picks the dim and warns."""

    def __init__(self, dim: Optional[int] = None, *, variant: str = "auto") -> None:
        super().__init__(dim)
        self.variant = variant

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        if self.dim is not None and routable(input):
            return ops.softmax(input, self.dim, variant=self.variant)
        return F.softmax(input, self.dim, _stacklevel=5)
