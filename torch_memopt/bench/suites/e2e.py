"""Whole models: stock eager and torch.compile (the peers) against ``optimize_`` and
``optimize_`` + torch.compile (ours), on the same inputs, in bfloat16.

Models (``model_zoo``, random weights from configs, nothing downloaded): Hugging Face
Llama (8 layers, hidden 2048, eager attention), GPT-2 small, BERT base, timm ViT-B/16.
Steps: prefill at batch 8 × 512 tokens (ViT: 8 images); one decode step for the causal
LMs at batch 1 and 8, one new token after a 512-token prompt (the KV cache is filled
once and cropped back to the prompt before every timed call, so each call sees the same
cache). Timing: whole calls between CUDA events, host work included (the latency a user
sees), sampled in turns (``timing.interleaved_median_ms``); no L2 flush: the weights
alone are 5-20× the L2. torch.compile: default mode, dynamo reset once a case (both
compiled models of a step are timed in turns, so a reset between them would throw the
first one's graphs away). Outputs are checked against stock eager's: cosine ≥ 0.999.
--quick: Llama's prefill and its batch-1 decode. Without a GPU: small configs, float32,
the CPU kernels.
"""
from __future__ import annotations

import contextlib
import copy

import torch

import torch_memopt

from ..case import Case, Impl
from ..peers import Unavailable
from ..report import Column, times

NAME = "e2e"
TITLE = "whole models: optimize_ against eager and torch.compile"
ABOUT = (
    "Whole models, random weights from configs, in bfloat16: Hugging Face Llama (8 layers, "
    "hidden 2048), GPT-2 small, BERT base and timm ViT-B/16; stock eager and torch.compile "
    "against `optimize_` and `optimize_` + torch.compile, prefill at 8 × 512 tokens and one "
    "decode step at batch 1 and 8 after 512; whole-call latency, host included.")

CAUSAL = ("llama", "gpt2")
MODELS = ("llama", "gpt2", "bert", "vit")
QUICK_MODELS = ("llama",)
REPS, QUICK_REPS = 20, 10
COSINE_TOLERANCE = 1e-3  # 1 - cosine similarity against stock eager
SUMMARY_VARIANT = "optimize_"
TIMING = ("median of whole calls between CUDA events, host work included, the four "
          "implementations sampled in turns; no L2 flush")
LAYOUT = "cases"  # a row a step: the four models' latencies side by side
COLUMNS = [Column("× eager", lambda r: times(r["peers"]["eager"] / r["ours_us"])
                  if r["ours_us"] and r["peers"].get("eager") else "—")]


def steps(model: str, small: bool, quick: bool) -> list[tuple[str, int, int]]:
    """(step, batch, prompt tokens): prefill, and for causal LMs decode at batch 1 and 8."""
    prompt, batch = (16, 2) if small else (512, 8)
    out = [("prefill", batch, prompt)]
    if model in CAUSAL:
        out += [("decode", 1, prompt)] + ([] if quick else [("decode", batch, prompt)])
    return out


def variant_model(stock: torch.nn.Module, variant: str) -> torch.nn.Module:
    model = copy.deepcopy(stock)
    if variant.startswith("optimize_"):
        torch_memopt.optimize_(model)
    if variant.endswith("compile"):
        model = torch.compile(model)
    return model


def make_call(real, model, step: str, batch: int, tokens: int):
    """A no-argument call running one step; it returns the logits to compare."""
    inputs = real.make_input(batch, tokens)
    if step == "prefill":
        return lambda: real.logits(model(**inputs))
    cache = model(**inputs, use_cache=True).past_key_values  # the prompt, once
    next_token = inputs["input_ids"][:, -1:]

    def decode():
        extra = cache.get_seq_length() - tokens
        if extra > 0:  # back to the prompt: the same cache for every call (a negative
            cache.crop(-extra)  # crop counts tokens to drop, in transformers 4 and 5 alike)
        return real.logits(model(input_ids=next_token, past_key_values=cache, use_cache=True))

    return decode


def cosine_error(out: torch.Tensor, ref: torch.Tensor) -> float:
    if out.shape != ref.shape:
        return float("inf")
    cos = torch.nn.functional.cosine_similarity(out.float().flatten(), ref.float().flatten(), dim=0)
    return 1.0 - float(cos)


def _context(on_cpu: bool):
    @contextlib.contextmanager
    def context():
        torch._dynamo.reset()
        with torch.inference_mode(), torch_memopt.use_cpu_kernels(on_cpu):
            yield
    return context


def cases(ctx) -> list:
    try:
        from .. import model_zoo
        import transformers  # noqa: F401
        import timm  # noqa: F401
    except ImportError as exc:
        raise Unavailable(f"the e2e suite builds Hugging Face and timm models: {exc}") from None
    small = not ctx.cuda
    dtype = torch.bfloat16 if ctx.cuda else torch.float32
    names = [m for m in (QUICK_MODELS if ctx.quick else MODELS) if ctx.wants_op(m)]
    peer_names = ctx.pick_peers(["eager", "compile"])
    # The CPU compiles no model either (Context.pick_peers says why).
    variants = [v for v in (["optimize_", "optimize_+compile"] if ctx.cuda else ["optimize_"])
                if not ctx.variants or v in ctx.variants]
    out = []
    for name in names:
        real = model_zoo.BUILDERS[name](small, ctx.device, dtype)
        for step, batch, tokens in steps(name, small, ctx.quick):
            def impl(variant, kind, real=real, step=step, batch=batch, tokens=tokens):
                return Impl(variant, kind,
                            lambda: make_call(real, variant_model(real.model, variant), step, batch, tokens))
            label = (f"{step} {batch} images" if name == "vit" else
                     f"prefill {batch} × {tokens}" if step == "prefill" else
                     f"decode {batch} × 1 after {tokens}")
            out.append(Case(
                suite=NAME, op=name, dtype=str(dtype).removeprefix("torch."),
                shape={"batch": batch, "tokens": tokens}, label=label,
                impls=[impl(name, "peer") for name in peer_names]
                + [impl(name, "ours") for name in variants],
                make_inputs=tuple, reference=None, tolerance=COSINE_TOLERANCE, error=cosine_error,
                timing="latency", context=_context(not ctx.cuda),
                extra={"step": step, "reps": QUICK_REPS if ctx.quick else REPS}))
    return out
