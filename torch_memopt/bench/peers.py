"""The peers our kernels are timed against, as plug-ins: each registers its name, the
ops it serves and a builder that makes its call for one case, or raises ``Unavailable``
with the reason it cannot run here (a missing package, the wrong device), which the
results record. A new peer is one ``@peer`` function; the suites name peers, never
build them.

- ``cublas``: the matmuls through torch on CUDA (``torch.mm``, ``F.linear`` and the
  activation), i.e. cuBLAS / cuBLASLt; fp32 with TF32 off (``calls.fp32_matmul_without_tf32``).
- ``eager``: the stock PyTorch op in eager mode (the matmuls on the CPU too).
- ``compile``: ``torch.compile`` of the stock op, default mode, ``dynamic=False``, so
  Inductor specializes its kernel to the shape as a model with fixed shapes gets it;
  ``torch._dynamo.reset()`` before every build: every case compiles the same Python
  function, and past dynamo's recompile limit (8) it would run it eagerly without a word.
- ``liger``: Liger-Kernel's forward (its autograd Functions, the layer its modules call)
  where the package is importable and a CUDA GPU is present: rms_norm (casting mode
  "llama", its default), layer_norm, softmax over the last dim, the fused add + RMSNorm.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from . import calls

Builder = Callable[[str, dict, torch.device], Callable]


class Unavailable(Exception):
    """A peer or variant that cannot run here; the message says why."""


@dataclass(frozen=True)
class Peer:
    name: str
    serves: Callable[[str, str], bool]  # (op, device type) -> whether it has that op there
    build: Builder


PEERS: dict[str, Peer] = {}


def peer(name: str, serves: Callable[[str, str], bool]) -> Callable[[Builder], Builder]:
    def register(build: Builder) -> Builder:
        PEERS[name] = Peer(name, serves, build)
        return build
    return register


def serves(name: str, op: str, device: torch.device) -> bool:
    """Whether peer ``name`` has ``op`` on ``device``'s type at all (a norm case has no
    cublas column, a CPU run no Liger one); whether it can run here is ``build``'s say."""
    if name not in PEERS:
        raise ValueError(f"unknown peer {name!r}; peers: {', '.join(PEERS)}")
    return PEERS[name].serves(op, torch.device(device).type)


def build(name: str, op: str, options: dict, device: torch.device) -> Callable:
    """Peer ``name``'s call for ``op``; ``Unavailable`` when it cannot run here."""
    return PEERS[name].build(op, options, torch.device(device))


def runnable(names, op: str, options: dict, device: torch.device) -> dict[str, Callable]:
    """The calls of those of ``names`` that serve ``op`` on ``device`` and can run here (the
    tuning probes' peer columns), in the order named."""
    calls_by_name = {}
    for name in names:
        if serves(name, op, device):
            try:
                calls_by_name[name] = build(name, op, options, device)
            except Unavailable:
                continue
    return calls_by_name


def _matmul(op: str) -> bool:
    return op in calls.MATMUL_OPS


@peer("cublas", lambda op, device: _matmul(op) and device == "cuda")
def _cublas(op: str, options: dict, device: torch.device) -> Callable:
    return calls.stock(op, options)


# On CUDA the eager matmul is the cublas peer.
@peer("eager", lambda op, device: not _matmul(op) or device != "cuda")
def _eager(op: str, options: dict, device: torch.device) -> Callable:
    return calls.stock(op, options)


@peer("compile", lambda op, device: True)
def _compile(op: str, options: dict, device: torch.device) -> Callable:
    torch._dynamo.reset()
    stock = calls.stock(op, options)

    def compiled_stock(*args):  # dynamo traces Python frames; torch.mm is a builtin
        return stock(*args)

    return torch.compile(compiled_stock, dynamic=False)


def first_line(exc: BaseException) -> str:
    """``Type: first line of the message``: what a record's reason or note keeps."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"


LIGER_OPS = ("rms_norm", "layer_norm", "softmax", "add_rms_norm")


@peer("liger", lambda op, device: op in LIGER_OPS and device == "cuda")
def _liger(op: str, options: dict, device: torch.device) -> Callable:
    try:
        import liger_kernel  # noqa: F401
    except Exception as exc:
        raise Unavailable(f"liger_kernel is not importable ({first_line(exc)})") from None
    eps = options.get("eps")
    if op == "layer_norm":
        from liger_kernel.ops.layer_norm import LigerLayerNormFunction

        eps = calls.LAYER_NORM_EPS if eps is None else eps
        return lambda x, shape, weight, bias: LigerLayerNormFunction.apply(x, weight, bias, eps)
    eps = calls.RMS_NORM_DEFAULT_EPS if eps is None else eps
    if op == "rms_norm":
        from liger_kernel.ops.rms_norm import LigerRMSNormFunction

        return lambda x, shape, weight: LigerRMSNormFunction.apply(x, weight, eps)
    if op == "add_rms_norm":
        from liger_kernel.ops.fused_add_rms_norm import LigerFusedAddRMSNormFunction

        return lambda x, residual, shape, weight: LigerFusedAddRMSNormFunction.apply(
            x, residual, weight, eps)
    from liger_kernel.ops.softmax import LigerSoftmaxFunction

    def softmax(x, dim):
        if dim not in (-1, x.dim() - 1):
            raise Unavailable("Liger's softmax reduces the last dim only")
        return LigerSoftmaxFunction.apply(x)

    return softmax
