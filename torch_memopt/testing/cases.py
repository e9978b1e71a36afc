"""Random cases for the fuzzer, one op at a time: shapes (0, 1, 2, 7, primes, powers of
two and their neighbours, up to 8191), dtypes, layouts (layouts.py), optional arguments
present and absent, a variant of the op, and for the norms and softmax rows poisoned
with NaN, inf, -inf or finfo.min. Case i of op under seed s is the same on every run
and every machine: its random streams are seeded from (s, op, i) alone."""

from __future__ import annotations

import dataclasses
import random

import torch

from . import layouts

SIZES = (1, 2, 3, 7, 8, 13, 16, 31, 32, 33, 64, 97, 127, 128, 129, 255, 256, 257, 509, 1000,
         1023, 1024, 1025, 2049, 4095, 4097, 8191)
DTYPES = (torch.float32, torch.float16, torch.bfloat16)
ACTIVATIONS = ("none", "relu", "gelu", "gelu_tanh", "silu")
# Work a case may take: multiply-adds of a GEMM, elements of a norm or softmax input.
# The float64 reference runs on the CPU, and so do the CPU kernels under test.
BUDGET = {"cpu": {"macs": 2 ** 21, "numel": 2 ** 17}, "cuda": {"macs": 2 ** 26, "numel": 2 ** 22}}


@dataclasses.dataclass
class Case:
    op: str
    args: tuple
    kwargs: dict
    reduction: int  # the length each output element reduces over (for the tolerance)
    description: str
    tf32: bool = False  # run under torch.backends.cuda.matmul.allow_tf32 (fp32 GEMMs)


def streams(seed: int, op: str, index: int) -> tuple[random.Random, torch.Generator]:
    """The case's Python and torch random streams, from (seed, op, index) only."""
    rng = random.Random(f"{seed}/{op}/{index}")
    return rng, torch.Generator().manual_seed(rng.getrandbits(63))


def _size(rng: random.Random, cap: int) -> int:
    return rng.choice([s for s in SIZES if s <= cap] or [1])


def _fit(dims: list[int], limit: int) -> list[int]:
    """dims with the largest halved until their product is within limit."""
    while dims and _product(dims) > limit:
        i = max(range(len(dims)), key=dims.__getitem__)
        dims[i] = max(1, dims[i] // 2)
    return dims


def _product(dims) -> int:
    out = 1
    for d in dims:
        out *= d
    return out


def _leading(rng: random.Random) -> list[int]:
    """Batch dims in front of a row: none, one or two; now and then an empty one."""
    dims = [_size(rng, 1025) for _ in range(rng.choice((0, 1, 1, 2)))]
    if dims and rng.random() < 0.05:
        dims[rng.randrange(len(dims))] = 0
    return dims


def _poison(x: torch.Tensor, rng: random.Random, kind: str) -> str:
    """Writes NaN, +inf, a row of -inf or a row of finfo.min into the last-dim rows of
    x (in place; x is a fresh tensor or a view of one); returns what it wrote."""
    if x.numel() == 0 or x.dim() == 0:
        return ""
    index = [rng.randrange(s) for s in x.shape]
    if kind == "nan":
        x[tuple(index)] = float("nan")
    elif kind == "inf":
        x[tuple(index)] = float("inf")
    elif kind in ("-inf row", "finfo.min row"):
        value = float("-inf") if kind == "-inf row" else torch.finfo(x.dtype).min
        x[tuple(index[:-1])] = value
    return f" with a {kind}"


def _pick_dtype(rng):
    return rng.choice(DTYPES)


def gemm(rng, gen, device, variants):
    dtype = _pick_dtype(rng)
    m, k, n = _fit([_size(rng, 8191), _size(rng, 8191), _size(rng, 8191)], BUDGET[device]["macs"])
    la, lb = layouts.pick_layout(rng), layouts.pick_layout(rng)
    a = layouts.make([m, k], dtype, device, la, gen)
    b = layouts.make([k, n], dtype, device, lb, gen)
    variant = rng.choice(variants)
    tf32 = dtype == torch.float32 and rng.random() < 0.25
    return Case("gemm", (a, b), {"variant": variant}, k,
                f"gemm {m}x{k} @ {k}x{n} {dtype} a {la} b {lb} variant={variant} tf32={tf32}", tf32)


def linear(rng, gen, device, variants):
    dtype = _pick_dtype(rng)
    lead = _leading(rng)
    k, n = _size(rng, 8191), _size(rng, 8191)
    dims = _fit(lead + [k, n], BUDGET[device]["macs"])
    lead, k, n = dims[:-2], dims[-2], dims[-1]
    lx, lw = layouts.pick_layout(rng), layouts.pick_layout(rng)
    x = layouts.make(lead + [k], dtype, device, lx, gen)
    w = layouts.make([n, k], dtype, device, lw, gen)
    bias = layouts.make([n], dtype, device, "contiguous", gen) if rng.random() < 0.5 else None
    act, variant = rng.choice(ACTIVATIONS), rng.choice(variants)
    tf32 = dtype == torch.float32 and rng.random() < 0.25
    return Case("linear", (x, w, bias), {"activation": act, "variant": variant}, k,
                f"linear x {lead + [k]} {lx} w [{n}, {k}] {lw} {dtype} bias={bias is not None} "
                f"activation={act} variant={variant} tf32={tf32}", tf32)


def _norm_inputs(rng, gen, device):
    """(dtype, input, normalized_shape, param dtype, layout, poison note)."""
    dtype = _pick_dtype(rng)
    norm = [_size(rng, 8191)] if rng.random() < 0.8 else [_size(rng, 64), _size(rng, 128)]
    lead = _fit(_leading(rng), max(1, BUDGET[device]["numel"] // _product(norm)))
    layout = layouts.pick_layout(rng)
    x = layouts.make(lead + norm, dtype, device, layout, gen, scale=2.0)
    note = ""
    if rng.random() < 0.15 and layout != "expanded":
        note = _poison(x, rng, rng.choice(("nan", "inf")))
    pdtype = torch.float32 if dtype != torch.float32 and rng.random() < 0.3 else dtype
    return dtype, x, norm, pdtype, layout, note


def layer_norm(rng, gen, device, variants):
    dtype, x, norm, pdtype, layout, note = _norm_inputs(rng, gen, device)
    w = layouts.randn(norm, pdtype, device, gen) if rng.random() < 0.7 else None
    b = layouts.randn(norm, pdtype, device, gen) if rng.random() < 0.7 else None
    eps, variant = rng.choice((1e-5, 1e-6, 1e-3)), rng.choice(variants)
    return Case("layer_norm", (x, norm, w, b, eps), {"variant": variant}, _product(norm),
                f"layer_norm {list(x.shape)} over {norm} {dtype} {layout}{note} params {pdtype} "
                f"weight={w is not None} bias={b is not None} eps={eps} variant={variant}")


def rms_norm(rng, gen, device, variants):
    dtype, x, norm, pdtype, layout, note = _norm_inputs(rng, gen, device)
    w = layouts.randn(norm, pdtype, device, gen) if rng.random() < 0.7 else None
    eps, variant = rng.choice((None, 1e-5, 1e-6)), rng.choice(variants)
    return Case("rms_norm", (x, norm, w, eps), {"variant": variant}, _product(norm),
                f"rms_norm {list(x.shape)} over {norm} {dtype} {layout}{note} params {pdtype} "
                f"weight={w is not None} eps={eps} variant={variant}")


def _add_norm(op, rng, gen, device, variants):
    dtype, x, norm, pdtype, layout, note = _norm_inputs(rng, gen, device)
    lr = layouts.pick_layout(rng)
    r = layouts.make(list(x.shape), dtype, device, lr, gen)
    w = layouts.randn(norm, pdtype, device, gen) if rng.random() < 0.7 else None
    variant = rng.choice(variants)
    if op == "add_layer_norm":
        b = layouts.randn(norm, pdtype, device, gen) if rng.random() < 0.7 else None
        args, eps = (x, r, norm, w, b, 1e-5), 1e-5
    else:
        eps = rng.choice((None, 1e-6))
        args = (x, r, norm, w, eps)
    return Case(op, args, {"variant": variant}, _product(norm),
                f"{op} {list(x.shape)} over {norm} {dtype} input {layout}{note} residual {lr} "
                f"params {pdtype} weight={w is not None} eps={eps} variant={variant}")


def add_layer_norm(rng, gen, device, variants):
    return _add_norm("add_layer_norm", rng, gen, device, variants)


def add_rms_norm(rng, gen, device, variants):
    return _add_norm("add_rms_norm", rng, gen, device, variants)


def softmax(rng, gen, device, variants):
    dtype = _pick_dtype(rng)
    ndim = rng.choice((0, 1, 2, 2, 2, 3, 4))
    shape = _fit([_size(rng, 8191) for _ in range(ndim)], BUDGET[device]["numel"])
    layout = layouts.pick_layout(rng)
    x = layouts.make(shape, dtype, device, layout, gen, scale=4.0)
    note = ""
    if rng.random() < 0.2 and layout != "expanded":
        note = _poison(x, rng, rng.choice(("nan", "inf", "-inf row", "finfo.min row")))
    dim = rng.randrange(-ndim, ndim) if ndim else rng.choice((0, -1))
    out_dtype = rng.choice((None, None, torch.float32, dtype))
    variant = rng.choice(variants)
    return Case("softmax", (x, dim, out_dtype), {"variant": variant},
                shape[dim] if ndim else 1,
                f"softmax {shape} {dtype} {layout}{note} dim={dim} dtype={out_dtype} variant={variant}")


GENERATORS = {"gemm": gemm, "linear": linear, "layer_norm": layer_norm, "rms_norm": rms_norm,
              "add_layer_norm": add_layer_norm, "add_rms_norm": add_rms_norm, "softmax": softmax}


def make_case(op: str, seed: int, index: int, device: str, variants: list[str]) -> Case:
    rng, gen = streams(seed, op, index)
    return GENERATORS[op](rng, gen, device, variants)
