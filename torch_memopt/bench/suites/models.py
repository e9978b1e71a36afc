"""The default suite: every op at the shapes real models run, against the best stock
path on this machine.

The layers of Llama-3-8B, Mistral-7B, GPT-2 (small) and BERT-base, from their published
configs, at 1, 16, 128, 512, 2048 and 8192 tokens, in bfloat16: the linear layers (qkv,
o, up and down projections, with the models' biases and fused activations), the norm
and the fused residual add + norm over the hidden size, softmax over the vocabulary,
and attention's softmax (heads·T rows of T) at 128-2048 tokens (past that, models run a
fused attention kernel with no softmax of its own). A shape two models share is one
case, labelled with both.

Peers: cuBLAS for the linear layers, plus torch.compile where the layer has an
activation to fuse (without one, Inductor's default mode lowers F.linear to the same
cuBLAS GEMM, extern_kernels.mm / addmm); eager, torch.compile and Liger-Kernel for the
norms and softmax. Without a GPU: the CPU reference kernels against eager, float32,
the 768-wide models' layers and every norm and softmax at 1 and 16 tokens.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..case import make_case

NAME = "models"
TITLE = "every op at the shapes of Llama-3-8B, Mistral-7B, GPT-2 and BERT-base"
ABOUT = (
    "The default suite, `python -m torch_memopt.bench`: every op at the layer shapes of "
    "Llama-3-8B, Mistral-7B, GPT-2 and BERT-base at 1-8192 tokens, bfloat16, `auto` "
    "against the best stock path (cuBLAS, eager, torch.compile, Liger-Kernel).")


@dataclass(frozen=True)
class Model:
    name: str
    hidden: int
    heads: int
    kv_heads: int
    intermediate: int
    vocab: int
    norm: str  # "rms_norm" | "layer_norm"
    eps: float
    bias: bool = False
    activation: str = "none"  # of the up projection; SwiGLU's gate is not fusable
    gated: bool = False  # gate and up projections in one GEMM of 2 x intermediate

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads


# From the models' config.json on the Hugging Face hub.
MODELS = (
    Model("llama-3-8b", 4096, 32, 8, 14336, 128256, "rms_norm", 1e-5, gated=True),
    Model("mistral-7b", 4096, 32, 8, 14336, 32000, "rms_norm", 1e-5, gated=True),
    Model("gpt-2", 768, 12, 12, 3072, 50257, "layer_norm", 1e-5, bias=True, activation="gelu_tanh"),
    Model("bert-base", 768, 12, 12, 3072, 30522, "layer_norm", 1e-12, bias=True, activation="gelu"),
)
QUICK_MODELS = ("llama-3-8b", "gpt-2")
TOKENS = (1, 16, 128, 512, 2048, 8192)
QUICK_TOKENS = (16, 2048)
ATTENTION_TOKENS = (128, 512, 2048)
CPU_TOKENS, CPU_QUICK_TOKENS = (1, 16), (16,)
# The CPU reference GEMM runs ~2 GFLOP/s on two cores: Llama's 4096 x 28672 layer at 16
# tokens takes 0.9 s a call, too long for a check that the path works.
CPU_MAX_LINEAR_WIDTH = 1024


def layer_shapes(model: Model, tokens: int) -> list[tuple[str, str, dict, dict]]:
    """(layer, op, shape, options) of one model's layers at ``tokens`` tokens."""
    from ..calls import matmul_shape, rows_shape

    h, t = model.hidden, tokens
    up = 2 * model.intermediate if model.gated else model.intermediate
    linear = {"bias": model.bias}
    layers = [
        ("qkv", "linear", matmul_shape(t, h + 2 * model.kv_heads * model.head_dim, h), linear),
        ("o", "linear", matmul_shape(t, h, h), linear),
        ("up", "linear", matmul_shape(t, up, h), {**linear, "activation": model.activation}),
        ("down", "linear", matmul_shape(t, h, model.intermediate), linear),
        ("norm", model.norm, rows_shape(t, h), {"eps": model.eps}),
        ("add+norm", f"add_{model.norm}", rows_shape(t, h), {"eps": model.eps}),
        ("vocab", "softmax", rows_shape(t, model.vocab), {}),
    ]
    if tokens in ATTENTION_TOKENS:
        layers.append(("attention", "softmax", rows_shape(model.heads * t, t), {}))
    return layers


def _peers(ctx, op: str, options: dict) -> list[str]:
    if op == "linear":
        fusable = options.get("activation", "none") != "none"
        return ctx.pick_peers(["cublas", "eager"] + (["compile"] if fusable else []))
    return ctx.pick_peers(["eager", "compile", "liger"])


def cases(ctx) -> list:
    if ctx.cuda:
        tokens = QUICK_TOKENS if ctx.quick else TOKENS
        models = [m for m in MODELS if not ctx.quick or m.name in QUICK_MODELS]
        dtypes = ctx.pick_dtypes([torch.bfloat16])
    else:
        tokens = CPU_QUICK_TOKENS if ctx.quick else CPU_TOKENS
        models = list(MODELS)
        dtypes = ctx.pick_dtypes([torch.float32])
    out = []
    for dtype in dtypes:
        for t in tokens:
            merged: dict[tuple, list[str]] = {}  # one case per distinct problem
            for model in models:
                for order, (layer, op, shape, options) in enumerate(layer_shapes(model, t)):
                    too_wide = op == "linear" and not ctx.cuda and model.hidden > CPU_MAX_LINEAR_WIDTH
                    if ctx.wants_op(op) and not too_wide:
                        key = (order, op, tuple(shape.items()), tuple(sorted(options.items())), layer)
                        merged.setdefault(key, []).append(model.name)
            # Layer by layer (every model's qkv, then every o, ...), as the tables read best.
            for (_, op, shape, options, layer), names in sorted(merged.items(), key=lambda kv: kv[0][0]):
                options = dict(options)
                out.append(make_case(NAME, op, dtype, dict(shape), device=ctx.device,
                                     variants=ctx.pick_variants(op), peer_names=_peers(ctx, op, options),
                                     options=options, label=f"{', '.join(names)} {layer}",
                                     extra={"tokens": t, "models": names, "layer": layer}))
    return out
