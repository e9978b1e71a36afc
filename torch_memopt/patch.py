"""One line to speed up a model you already have.

``optimize_(model)`` swaps, in place, the ``torch.nn`` modules memopt has a drop-in for
(``Linear``, ``LayerNorm``, ``RMSNorm``, ``Softmax``) and modules of other libraries
recognized by what they compute (RMSNorms such as Hugging Face's LlamaRMSNorm;
``x @ weight + bias`` layers such as GPT-2's Conv1D), then fuses each MLP's activation
into the linear before it (torch_memopt/fuse.py), and records what it replaced and
what it skipped, and why: ``last_report()``.

``enable()`` is for models that call the functionals: inside ``with enable():``,
``F.linear``, 2-D ``torch.mm`` / ``torch.matmul`` / ``@``, ``F.layer_norm``,
``F.rms_norm`` and ``torch.softmax`` / ``F.softmax`` / ``Tensor.softmax`` go to memopt
when it takes the case (``_routing.routable``) and to the stock op otherwise.

Both leave training possible: a call that needs a gradient runs the stock op.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Optional

import torch
import torch.nn.functional as F
from torch import nn
from torch.overrides import TorchFunctionMode

from torch_memopt import nn as mnn
from torch_memopt import ops
from torch_memopt._routing import DTYPES, routable


@dataclasses.dataclass
class Entry:
    """One module optimize_ looked at: replaced (``replacement`` set) or skipped (``reason``)."""

    name: str
    original: str
    replacement: Optional[str] = None
    reason: Optional[str] = None


@dataclasses.dataclass
class Report:
    """What one ``optimize_`` call did, module by module."""

    entries: list[Entry] = dataclasses.field(default_factory=list)

    @property
    def replaced(self) -> list[Entry]:
        return [e for e in self.entries if e.replacement is not None]

    @property
    def skipped(self) -> list[Entry]:
        return [e for e in self.entries if e.replacement is None]

    def __str__(self) -> str:
        lines = [f"optimize_: {len(self.replaced)} modules replaced, {len(self.skipped)} skipped"]
        lines += [f"  {e.name}: {e.original} -> {e.replacement}" for e in self.replaced]
        lines += [f"  {e.name}: {e.original} kept ({e.reason})" for e in self.skipped]
        return "\n".join(lines)


_last_report: Optional[Report] = None


def last_report() -> Optional[Report]:
    """The report of the latest ``optimize_`` call in this process (None before any)."""
    return _last_report


# --- the behaviour probe shared by every "computes the same" check -----------------------

def _probe(module: nn.Module, shape: tuple, device, dtype) -> tuple[torch.Tensor, object]:
    """(x, module(x)) on fresh seeded random input of ``shape``; module(x) is None when
    the module cannot take it (then it is not one of the modules memopt replaces)."""
    (x,), got = _probe_with(module, (shape,), device, dtype)
    return x, got


def _probe_with(module: nn.Module, shapes: tuple, device, dtype) -> tuple[tuple, object]:
    """``_probe`` for a module of several inputs, one of each shape (BERT's output blocks
    take the hidden rows and the residual): (inputs, module(*inputs))."""
    generator = torch.Generator(device=device).manual_seed(0)
    inputs = tuple(torch.randn(shape, device=device, dtype=dtype, generator=generator)
                   for shape in shapes)
    try:
        return inputs, module(*inputs)
    except Exception:
        return inputs, None


# --- subclasses of the torch modules (timm's LayerNorm, ...) ---------------------------------

@torch.no_grad()
def _behaves_like(module: nn.Module, base: type) -> bool:
    """Whether a subclass of ``base`` computes what ``base.forward`` does on fresh random
    input: timm's LayerNorm does; a LoRA Linear, which adds a term, does not."""
    param = next(module.parameters(), None)
    device, dtype = (param.device, param.dtype) if param is not None else ("cpu", torch.float32)
    if base is nn.Linear:
        shape = (3, module.in_features)
    elif base is nn.Softmax:
        if module.dim is None:
            return False
        shape = (3, 5, 7)
    else:
        shape = (3, *module.normalized_shape)
    x, got = _probe(module, shape, device, dtype)
    if not isinstance(got, torch.Tensor):
        return False
    try:
        expected = base.forward(module, x)
    except Exception:  # a subclass lacking what the base forward reads
        return False
    return (got.shape == expected.shape
            and got.dtype == expected.dtype and torch.equal(got, expected))


# --- RMSNorm classes of other libraries (Hugging Face's LlamaRMSNorm and kin) -----------

_EPS_NAMES = ("variance_epsilon", "eps", "epsilon")


def _rms_like_eps(module: nn.Module) -> Optional[float]:
    """The epsilon of a module shaped like an RMSNorm (one 1-D ``weight``, nothing else,
    a float epsilon attribute), else None. Shape only; ``_computes_rms_norm`` checks
    the arithmetic."""
    params = dict(module.named_parameters(recurse=False))
    if set(params) != {"weight"} or params["weight"].dim() != 1:
        return None
    if list(module.children()) or list(module.buffers(recurse=False)):
        return None
    for name in _EPS_NAMES:
        eps = getattr(module, name, None)
        if isinstance(eps, float):
            return eps
    return None


@torch.no_grad()
def _computes_rms_norm(module: nn.Module, eps: float) -> bool:
    """Whether ``module(x)`` equals ``F.rms_norm(x, [n], weight, eps)``, in the weight's
    dtype and device, on fresh random input: behaviour, not a list of class names (Gemma's
    RMSNorm, which scales by 1 + weight, fails it and is left alone)."""
    weight = module.weight
    x, got = _probe(module, (4, weight.numel()), weight.device, weight.dtype)
    if not isinstance(got, torch.Tensor) or got.shape != x.shape or got.dtype != x.dtype:
        return False
    expected = F.rms_norm(x.float(), (weight.numel(),), weight.float(), eps)
    tolerance = 1e-5 if weight.dtype == torch.float32 else 2e-2
    return torch.allclose(got.float(), expected, rtol=tolerance, atol=tolerance)


class RMSNormOf(mnn.RMSNorm):
    """An RMSNorm of another library on ``memopt::rms_norm``, sharing its weight (same
    state_dict key, ``weight``). Calls memopt cannot take, or whose input dtype differs
    from the weight's (where the original's output dtype may follow the weight), go to
    the original module, so the outputs stay the original's."""

    @classmethod
    def wrap(cls, module: nn.Module, eps: float, *, variant: str = "auto") -> "RMSNormOf":
        new = cls.__new__(cls)
        nn.Module.__init__(new)
        new.normalized_shape = (module.weight.numel(),)
        new.eps = eps
        new.elementwise_affine = True
        new.weight = module.weight  # the same Parameter: no copy
        new.variant = variant
        object.__setattr__(new, "original", module)  # not a child: keys stay "weight"
        return new

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        if input.dtype == self.weight.dtype and routable(input, self.weight):
            return ops.rms_norm(input, self.normalized_shape, self.weight, self.eps,
                                variant=self.variant)
        return self.original(input)

    def extra_repr(self) -> str:
        return f"{type(self.original).__name__}, {super().extra_repr()}"


# --- x @ weight + bias modules (Hugging Face's Conv1D in GPT-2 and kin) ---------------------

def _matmul_like(module: nn.Module) -> bool:
    """Shaped like ``x @ weight + bias``: a 2-D ``weight`` [in, out] and a 1-D ``bias``
    [out], nothing else. ``_computes_matmul`` checks the arithmetic."""
    params = dict(module.named_parameters(recurse=False))
    if set(params) != {"weight", "bias"} or list(module.children()) or list(module.buffers(False)):
        return False
    weight, bias = params["weight"], params["bias"]
    return weight.dim() == 2 and bias.dim() == 1 and bias.numel() == weight.shape[1]


@torch.no_grad()
def _computes_matmul(module: nn.Module) -> bool:
    """Whether ``module(x)`` equals ``x @ weight + bias`` on fresh random input."""
    weight = module.weight
    x, got = _probe(module, (3, weight.shape[0]), weight.device, weight.dtype)
    if not isinstance(got, torch.Tensor) or got.shape != (3, weight.shape[1]):
        return False
    expected = torch.addmm(module.bias.float(), x.float(), weight.float())
    tolerance = 1e-4 if weight.dtype == torch.float32 else 3e-2
    return torch.allclose(got.float(), expected, rtol=tolerance, atol=tolerance)


class MatmulOf(nn.Module):
    """A ``x @ weight + bias`` module of another library (weight [in, out]) on
    ``memopt::linear``, which reads the transposed weight as it lies; same parameters
    and state_dict keys. What memopt cannot take goes to the original module."""

    @classmethod
    def wrap(cls, module: nn.Module, *, variant: str = "auto") -> "MatmulOf":
        new = cls()
        new.weight, new.bias = module.weight, module.bias  # the same Parameters
        new.variant = variant
        object.__setattr__(new, "original", module)
        return new

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        if input.dim() >= 1 and routable(input, self.weight, self.bias):
            return ops.linear(input, self.weight.t(), self.bias, variant=self.variant)
        return self.original(input)

    def extra_repr(self) -> str:
        return (f"{type(self.original).__name__}, in={self.weight.shape[0]}, "
                f"out={self.weight.shape[1]}, variant={self.variant!r}")


# --- optimize_ ------------------------------------------------------------------------------

def _replacement(module: nn.Module, kinds: dict[str, bool]) -> tuple[Optional[nn.Module], str]:
    """(the drop-in for ``module`` or None, why not). Exact torch classes only: a subclass
    may override forward (LoRA layers, quantized linears), and swapping it would drop that."""
    cls = type(module)
    if isinstance(module, (mnn.Linear, mnn.LayerNorm, mnn.RMSNorm, mnn.Softmax, MatmulOf)):
        return None, "already a memopt module"
    exact = {nn.Linear: ("linear", mnn.Linear), nn.LayerNorm: ("layer_norm", mnn.LayerNorm),
             nn.RMSNorm: ("rms_norm", mnn.RMSNorm), nn.Softmax: ("softmax", mnn.Softmax)}
    if cls in exact:
        kind, drop_in = exact[cls]
        if not kinds[kind]:
            return None, f"{kind}=False"
        return drop_in.from_module(module), ""
    for base, (kind, drop_in) in exact.items():
        if isinstance(module, base):
            if not kinds[kind]:
                return None, f"{kind}=False"
            if isinstance(module, nn.modules.linear.NonDynamicallyQuantizableLinear):
                return None, "nn.MultiheadAttention's out_proj (read by weight, not called)"
            if _behaves_like(module, base):
                return drop_in.from_module(module), ""
            return None, f"a subclass of torch.nn.{base.__name__} whose forward differs"
    if _matmul_like(module):
        if not kinds["linear"]:
            return None, "linear=False"
        if _computes_matmul(module):
            return MatmulOf.wrap(module), ""
        return None, "shaped like x @ weight + bias but computes something else"
    eps = _rms_like_eps(module)
    if eps is not None:
        if not kinds["rms_norm"]:
            return None, "rms_norm=False"
        if _computes_rms_norm(module, eps):
            return RMSNormOf.wrap(module, eps), ""
        return None, "shaped like an RMSNorm but computes something else"
    return None, ""


def optimize_(model: nn.Module, *, linear: bool = True, layer_norm: bool = True,
              rms_norm: bool = True, softmax: bool = True, activations: bool = True,
              add_norms: bool = True,
              filter_fn: Optional[Callable[[str, nn.Module], bool]] = None) -> nn.Module:
    """Swap ``model``'s Linear / LayerNorm / RMSNorm / Softmax modules for memopt's, in
    place, sharing their parameters; returns ``model``. ``activations``: then fuse each
    MLP's activation into the linear before it (torch_memopt/fuse.py: a parent computing
    ``act(linear(x))``, ``fc2(act(fc1(x)))`` or ``down(act(gate(x)) * up(x))``, judged by
    its output). ``add_norms``: fuse the residual add into the norm after it where a
    parent computes ``norm(linear(h) + residual)`` (torch_memopt/fuse_add_norm.py: BERT's
    output blocks). ``filter_fn(name, module)`` returning False keeps a module. What was
    replaced and skipped: ``last_report()``. The root module itself is never replaced
    (there is no parent to hold the new one)."""
    global _last_report
    kinds = {"linear": linear, "layer_norm": layer_norm, "rms_norm": rms_norm, "softmax": softmax}
    report = Report()
    for name, parent, child_name, child in _children(model):
        new, why = _replacement(child, kinds)
        if new is not None and filter_fn is not None and not filter_fn(name, child):
            new, why = None, "filter_fn"
        if new is not None:
            setattr(parent, child_name, new)
            report.entries.append(Entry(name, type(child).__name__, type(new).__name__))
        elif why:
            report.entries.append(Entry(name, type(child).__name__, reason=why))
    if linear and (activations or add_norms):
        _fuse(model, report, filter_fn, activations,
              {k for k in ("layer_norm", "rms_norm") if add_norms and kinds[k]})
    _last_report = report
    return model


def _fuse(model: nn.Module, report: Report,
          filter_fn: Optional[Callable[[str, nn.Module], bool]], activations: bool,
          add_norms: set[str]) -> None:
    """optimize_'s second pass, after the linears and norms are memopt's: activation
    epilogues (torch_memopt/fuse.py) and residual adds into norms (fuse_add_norm.py, for
    the norm kinds in ``add_norms``)."""
    from torch_memopt import fuse, fuse_add_norm

    for name, parent, child_name, child in _children(model):
        if filter_fn is not None and not filter_fn(name, child):
            continue
        fused = fuse.fused_for(child) if activations else None
        if fused is None and add_norms:
            fused = fuse_add_norm.fused_add_norm_for(child, add_norms)
        if fused is not None:
            setattr(parent, child_name, fused)
            report.entries.append(Entry(name, type(child).__name__,
                                        f"{type(fused).__name__}({fused.summary()})"))


def _children(model: nn.Module):
    """(dotted name, parent, attribute name, child) for every module under ``model``, the
    root excepted; the modules listed before any is replaced, each parent's children as
    its turn comes (so a pass may swap them)."""
    for parent_name, parent in list(model.named_modules()):
        for child_name, child in list(parent.named_children()):
            name = f"{parent_name}.{child_name}" if parent_name else child_name
            yield name, parent, child_name, child


# --- enable(): the function mode -----------------------------------------------------------

def _linear(input, weight, bias=None):
    if weight.dim() == 2 and input.dim() >= 1 and routable(input, weight, bias):
        return ops.linear(input, weight, bias)
    return NotImplemented


def _matmul(a, b, *, out=None):
    if out is None and a.dim() == 2 and b.dim() == 2 and routable(a, b):
        return ops.gemm(a, b)
    return NotImplemented


def _layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    if routable(input, weight, bias, fp32_params=True):
        return ops.layer_norm(input, list(normalized_shape), weight, bias, eps)
    return NotImplemented


def _rms_norm(input, normalized_shape, weight=None, eps=None):
    if routable(input, weight, fp32_params=True):
        return ops.rms_norm(input, list(normalized_shape), weight, eps)
    return NotImplemented


def _softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is not None and (dtype is None or dtype in DTYPES) and routable(input):
        return ops.softmax(input, dim, dtype)
    return NotImplemented


def _softmax_dim_required(input, dim, dtype=None):
    """torch.softmax and Tensor.softmax: ``dim`` is positional and required there."""
    return _softmax(input, dim, dtype=dtype)


_HANDLERS = {
    F.linear: _linear,
    torch.mm: _matmul, torch.Tensor.mm: _matmul,
    torch.matmul: _matmul, torch.Tensor.matmul: _matmul, torch.Tensor.__matmul__: _matmul,
    F.layer_norm: _layer_norm,
    F.rms_norm: _rms_norm,
    F.softmax: _softmax, torch.softmax: _softmax_dim_required,
    torch.Tensor.softmax: _softmax_dim_required,
}


class _MemoptMode(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        handler = _HANDLERS.get(func)
        if handler is not None:
            try:
                out = handler(*args, **kwargs)
            except TypeError:  # a call form the handler does not know: the stock op decides
                out = NotImplemented
            if out is not NotImplemented:
                return out
        return func(*args, **kwargs)


def enable() -> TorchFunctionMode:
    """A context manager routing the functionals to memopt: ``with torch_memopt.enable():``."""
    return _MemoptMode()
