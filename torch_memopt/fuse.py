"""``optimize_``'s second pass: a linear layer and the activation after it, in one
``memopt::linear`` with the activation as its epilogue.

Models apply their MLP's activation in the forward code of a parent module, not as a
layer memopt could swap alone: Hugging Face's BertIntermediate and ViTIntermediate
(``act(dense(x))``), GPT-2's MLP and timm's Mlp (``fc2(act(fc1(x)))``, dropouts between),
Llama's gated MLP (``down(act(gate(x)) * up(x))``). Unfused, the activation is a kernel
of its own that reads and writes the whole hidden tensor again: in BERT base's prefill
(8 × 512 tokens) eager's GELU took 205 µs of 4529 µs of kernels (H200,
benchmarks/results/tune/e2e_profile_bert_h200.json), and ``optimize_`` left it there.

A parent is fused only when its own output, on fresh random input, is bit for bit what
the candidate composition of its children gives (behaviour, as the other swaps of
``optimize_`` are judged, not class names), and only three shapes are tried: a linear
then an activation; two linears around an activation (Dropout / Identity children
allowed, checked in eval mode); three linears and an activation, gated. The activation
is recognized by what it computes: relu, gelu (erf), gelu_tanh or silu. The fused module
keeps the parent's children under their names (the same state_dict keys) and runs the
parent itself for a call memopt cannot take, one that needs a gradient, in training
mode (where dropout acts), or where the linear it fuses has hooks or DTensor parameters
(tensor parallelism's conversions live in hooks on the linear).
"""
from __future__ import annotations

import contextlib
import itertools
from typing import Callable, Iterator, Optional

import torch
import torch.nn.functional as F
from torch import nn

from torch_memopt import nn as mnn
from torch_memopt import ops
from torch_memopt._routing import routable
from torch_memopt.patch import MatmulOf, _probe

try:
    from torch.distributed.tensor import DTensor
except ImportError:  # a build without torch.distributed
    DTensor = ()

# memopt::linear's epilogues, each with the stock function it must match.
ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "relu": F.relu,
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "silu": F.silu,
}
_PASSTHROUGH = (nn.Dropout, nn.Identity)


@torch.no_grad()
def activation_of(module: nn.Module) -> Optional[str]:
    """The epilogue name of a module without parameters, buffers or children that computes one of
    ``ACTIVATIONS`` (on fresh float32 input spanning ±6), else None. gelu and gelu_tanh
    differ by up to ~5e-4 there, far above the 1e-6 tolerance."""
    if list(module.parameters()) or list(module.buffers()) or list(module.children()) or \
            isinstance(module, _PASSTHROUGH):
        return None
    generator = torch.Generator().manual_seed(0)
    x = torch.rand(257, generator=generator) * 12 - 6
    try:
        got = module(x)
    except Exception:
        return None
    if not isinstance(got, torch.Tensor) or got.shape != x.shape:
        return None
    for name, fn in ACTIVATIONS.items():
        if torch.allclose(got, fn(x), rtol=1e-6, atol=1e-6):
            return name
    return None


def linear_parts(module: nn.Module) -> Optional[tuple[torch.Tensor, Optional[torch.Tensor]]]:
    """(weight [N, K], bias or None) of a module ``memopt::linear`` can run as it is: a
    torch or memopt Linear (exactly: a subclass may compute something else, a LoRA
    layer) or a ``x @ weight + bias`` module optimize_ wrapped (``MatmulOf``, weight
    [K, N], read transposed in place)."""
    if type(module) in (nn.Linear, mnn.Linear):
        return module.weight, module.bias
    if type(module) is MatmulOf:
        return module.weight.t(), module.bias
    return None


def runs_alone(linear: nn.Module) -> bool:
    """Whether a fused call may stand in for ``linear``'s own: no hooks on it (the fused
    call would skip them: tensor parallelism's input and output conversions, PEFT,
    observers) and no DTensor parameter (a sharded layer runs through its own forward)."""
    # Every fused forward asks this of one or two modules, so it reads the parameter
    # dict itself: module.parameters(recurse=False) builds a generator through
    # named_members, 1.8 us a call against 0.5 (CI host, timeit), five calls a BERT-base
    # layer: ~80 us of host time a prefill, which the H200 runs host-bound (4286 us of
    # kernels in a 5450 us call).
    return not (linear._forward_hooks or linear._forward_pre_hooks) and \
        not any(isinstance(p, DTensor) for p in linear._parameters.values())


@contextlib.contextmanager
def evaluating(parent: nn.Module) -> Iterator[bool]:
    """``parent`` in eval mode for a probe (Dropout off, so the outputs compare bit for
    bit), its own mode back afterwards; yields whether it was training."""
    was_training = parent.training
    parent.eval()
    try:
        yield was_training
    finally:
        parent.train(was_training)


def fusable(parent: nn.Module) -> bool:
    """Whether a parent may be fused at all: not fused already, and no parameters or
    buffers of its own (the fused module holds only the parent's children)."""
    return not isinstance(parent, Fused) and not list(parent.parameters(recurse=False)) and \
        not list(parent.buffers(recurse=False))


class Fused(nn.Module):
    """What the fused modules share (here and in fuse_add_norm.py): the parent's children
    under their own names (the same state_dict keys), the parent itself (not a child) for
    the calls memopt does not take."""

    def __init__(self, parent: nn.Module) -> None:
        super().__init__()
        for name, child in parent.named_children():
            self.add_module(name, child)
        object.__setattr__(self, "original", parent)
        self.training = parent.training

    def train(self, mode: bool = True) -> "Fused":
        # the parent is not a child: its own flag follows by hand (its children are ours)
        super().train(mode)
        self.original.train(mode)
        return self

    # The positional tensors the fused computation takes. Any other call (keywords, a
    # parent's optional arguments) runs the parent itself.
    arity = 1

    def forward(self, *args, **kwargs):
        if kwargs or len(args) != self.arity:
            return self.original(*args, **kwargs)
        return self.run_fused(*args)

    def run_fused(self, *args):
        raise NotImplementedError

    def _takes(self, x: torch.Tensor, *linears: nn.Module) -> bool:
        if self.training or not isinstance(x, torch.Tensor) or x.dim() < 1:
            return False
        return all(runs_alone(m) and routable(x, *linear_parts(m)) for m in linears)

    def summary(self) -> str:
        """What was fused, for optimize_'s report."""
        raise NotImplementedError

    def extra_repr(self) -> str:
        return f"{type(self.original).__name__}, {self.summary()}"


class _Activated(Fused):
    """A fused module with an activation epilogue."""

    def __init__(self, parent: nn.Module, activation: str) -> None:
        super().__init__(parent)
        self.activation = activation

    def summary(self) -> str:
        return self.activation


class LinearAct(_Activated):
    """``act(linear(x))`` as one ``memopt::linear`` with the activation as its epilogue."""

    def __init__(self, parent: nn.Module, linear: str, activation: str) -> None:
        super().__init__(parent, activation)
        self.linear_name = linear

    def run_fused(self, x: torch.Tensor) -> torch.Tensor:
        linear = getattr(self, self.linear_name)
        if not self._takes(x, linear):
            return self.original(x)
        return ops.linear(x, *linear_parts(linear), activation=self.activation)


class MLPAct(_Activated):
    """``second(act(first(x)))`` with the activation fused into the first linear."""

    def __init__(self, parent: nn.Module, first: str, second: str, activation: str) -> None:
        super().__init__(parent, activation)
        self.first_name, self.second_name = first, second

    def run_fused(self, x: torch.Tensor) -> torch.Tensor:
        first = getattr(self, self.first_name)
        if not self._takes(x, first):
            return self.original(x)
        hidden = ops.linear(x, *linear_parts(first), activation=self.activation)
        return getattr(self, self.second_name)(hidden)


class GatedMLPAct(_Activated):
    """``down(act(gate(x)) * up(x))`` (Llama's MLP) with the activation fused into gate."""

    def __init__(self, parent: nn.Module, gate: str, up: str, down: str, activation: str) -> None:
        super().__init__(parent, activation)
        self.gate_name, self.up_name, self.down_name = gate, up, down

    def run_fused(self, x: torch.Tensor) -> torch.Tensor:
        gate = getattr(self, self.gate_name)
        if not self._takes(x, gate):
            return self.original(x)
        gated = ops.linear(x, *linear_parts(gate), activation=self.activation)
        return getattr(self, self.down_name)(gated * getattr(self, self.up_name)(x))


def _candidates(parent: nn.Module):
    """(fused module factory, the composition of the parent's children it stands for)
    for each shape the parent's children allow."""
    children = dict(parent.named_children())
    linears = [n for n, m in children.items() if linear_parts(m) is not None]
    acts = {n: a for n, m in children.items() if (a := activation_of(m)) is not None}
    others = [n for n in children if n not in linears and n not in acts]
    if len(acts) != 1:
        return
    (act_name, act), = acts.items()
    if len(linears) == 1 and not others:
        lin = linears[0]
        yield (lambda: LinearAct(parent, lin, act)), lambda x: children[act_name](children[lin](x))
    passthrough = all(isinstance(children[n], _PASSTHROUGH) for n in others)
    if len(linears) == 2 and passthrough:
        for a, b in itertools.permutations(linears):
            yield ((lambda a=a, b=b: MLPAct(parent, a, b, act)),
                   lambda x, a=a, b=b: children[b](children[act_name](children[a](x))))
    if len(linears) == 3 and not others:
        for g, u, d in itertools.permutations(linears):
            yield ((lambda g=g, u=u, d=d: GatedMLPAct(parent, g, u, d, act)),
                   lambda x, g=g, u=u, d=d: children[d](
                       children[act_name](children[g](x)) * children[u](x)))


@torch.no_grad()
def fused_for(parent: nn.Module) -> Optional[Fused]:
    """The fused module standing for ``parent``, or None: the first candidate whose
    composition equals ``parent(x)`` bit for bit on fresh random input, in eval mode."""
    if not fusable(parent):
        return None
    candidates = list(_candidates(parent))
    if not candidates:
        return None
    weights = [parts[0] for m in parent.children() if (parts := linear_parts(m)) is not None]
    with evaluating(parent) as was_training:
        for width in {w.shape[1] for w in weights}:
            x, got = _probe(parent, (3, width), weights[0].device, weights[0].dtype)
            if got is None:
                continue
            for make, composition in candidates:
                try:
                    expected = composition(x)
                except Exception:
                    continue
                if isinstance(got, torch.Tensor) and got.shape == expected.shape and \
                        torch.equal(got, expected):
                    fused = make()
                    fused.train(was_training)
                    return fused
        return None
