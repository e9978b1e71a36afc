"""``optimize_``'s residual pass: a linear, the residual add after it and the norm after
that, as ``memopt::linear`` then one ``memopt::add_layer_norm`` / ``add_rms_norm``.

Hugging Face's BertSelfOutput and BertOutput (and their copies in RoBERTa, ELECTRA and
kin) compute ``LayerNorm(dropout(dense(h)) + residual)`` in their own forward, so the first
pass swaps the linear and the norm but leaves the add to eager: a kernel of its own that
reads two tensors and writes one, then the norm reads the sum again. BERT base's prefill
(8 × 512 tokens, H200) spent 122 µs of 4529 µs of kernels in those 24 adds, each 5 µs on
6.3 MB tensors, besides the 24 launches of host work. The fused add + norm reads the two
tensors once and writes the normalized rows and the sum; the sum is dropped here, so the
saving is the add's launch and one read of the sum, not the whole add.

As in ``fuse.py``, a parent is fused only when its output on fresh random input equals,
bit for bit, the composition of its own children, ``norm(linear(h) + residual)`` (Dropout
and Identity children allowed, checked in eval mode; addition commutes, so the operand
order does not matter), and the fused module runs the parent itself for any call memopt
does not take.
"""
from __future__ import annotations

from typing import Collection, Optional

import torch
from torch import nn

from torch_memopt import nn as mnn
from torch_memopt import ops
from torch_memopt._routing import routable
from torch_memopt.fuse import _PASSTHROUGH, Fused, evaluating, fusable, linear_parts, runs_alone
from torch_memopt.patch import _probe_with

# The norms whose arithmetic the fused ops reproduce (exact types: a subclass may compute
# something else), each with the op taking the sum.
_LAYER_NORMS = (nn.LayerNorm, mnn.LayerNorm)
_RMS_NORMS = (nn.RMSNorm, mnn.RMSNorm)


def _norm_kind(module: nn.Module) -> Optional[str]:
    if type(module) in _LAYER_NORMS:
        return "layer_norm"
    if type(module) in _RMS_NORMS:
        return "rms_norm"
    return None


class LinearAddNorm(Fused):
    """``norm(linear(h) + residual)``: memopt::linear, then the add and the norm in one
    pass."""

    arity = 2  # (hidden, residual), as BERT's blocks are called

    def __init__(self, parent: nn.Module, linear: str, norm: str, kind: str) -> None:
        super().__init__(parent)
        self.linear_name, self.norm_name, self.kind = linear, norm, kind

    def summary(self) -> str:
        return f"add_{self.kind}"

    def run_fused(self, hidden: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        linear, norm = getattr(self, self.linear_name), getattr(self, self.norm_name)
        params = (norm.weight, norm.bias) if self.kind == "layer_norm" else (norm.weight,)
        if not (self._takes(hidden, linear) and runs_alone(norm)
                and isinstance(residual, torch.Tensor) and residual.dtype == hidden.dtype
                and routable(residual, *params, fp32_params=True)):
            return self.original(hidden, residual)
        out = ops.linear(hidden, *linear_parts(linear))
        if residual.shape != out.shape:  # a broadcast add: the stock path has the rule
            return norm(out + residual)
        if self.kind == "layer_norm":
            normalized, _ = ops.add_layer_norm(out, residual, norm.normalized_shape,
                                               norm.weight, norm.bias, norm.eps)
        else:
            normalized, _ = ops.add_rms_norm(out, residual, norm.normalized_shape,
                                             norm.weight, norm.eps)
        return normalized


@torch.no_grad()
def fused_add_norm_for(parent: nn.Module,
                       kinds: Collection[str] = ("layer_norm", "rms_norm")) -> Optional[LinearAddNorm]:
    """The fused module standing for ``parent``, or None: a parent without parameters of
    its own, whose children are one linear, one norm of ``kinds`` (LayerNorm, RMSNorm) and
    any Dropout / Identity, and whose ``parent(h, residual)`` equals ``norm(linear(h) +
    residual)`` bit for bit on fresh random input, in eval mode."""
    if not fusable(parent):
        return None
    children = dict(parent.named_children())
    linears = [n for n, m in children.items() if linear_parts(m) is not None]
    norms = [n for n, m in children.items() if _norm_kind(m) in kinds]
    others = [n for n in children if n not in linears and n not in norms]
    if len(linears) != 1 or len(norms) != 1 or \
            not all(isinstance(children[n], _PASSTHROUGH) for n in others):
        return None
    linear, norm = children[linears[0]], children[norms[0]]
    weight, _ = linear_parts(linear)
    with evaluating(parent) as was_training:
        (h, r), got = _probe_with(parent, ((3, weight.shape[1]), (3, weight.shape[0])),
                                  weight.device, weight.dtype)
        if not isinstance(got, torch.Tensor):
            return None
        try:
            expected = norm(linear(h) + r)
        except Exception:  # a norm over other features than the linear's
            return None
        if not (got.shape == expected.shape and torch.equal(got, expected)):
            return None
    fused = LinearAddNorm(parent, linears[0], norms[0], _norm_kind(norm))
    fused.train(was_training)
    return fused
