"""End-to-end latency of real models (issue 6): stock eager, ``optimize_``, torch.compile,
and ``optimize_`` + torch.compile, on the same inputs, in bfloat16.

    python benchmarks/bench_model.py                      # every model, on the GPU
    python benchmarks/bench_model.py --models llama,gpt2  # some of them
    python benchmarks/bench_model.py --small --device cpu # the plumbing, small configs

Models (tests/real_models.py, random weights from configs, nothing downloaded): Hugging
Face Llama (8 layers, hidden 2048, eager attention), GPT-2 small, BERT base, timm
ViT-B/16. Steps: prefill, batch 8 × 512 tokens (ViT: batch 8 images); one decode step
for the causal LMs (Llama, GPT-2), batch 1 and 8, one new token after a 512-token
prompt: the KV cache is filled once and cropped back to the prompt before every timed
call, so each call sees the same cache. Timing: CUDA events around the whole call (host
work included: this is the latency a user sees), median of --reps calls after warm-up;
no L2 flush (the weights alone are 5-20× the L2). torch.compile: default mode, compiled
afresh per model and step, warm before timing. Outputs of every variant are checked
against stock eager (cosine similarity ≥ 0.999), and a variant that fails is not timed.
JSON to --out: meta and one record per (model, step, variant) {ms, speedup (stock eager
time / this), cosine, status, reason}.
"""
from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))  # real_models: the same builders the tests use

from latency import median_ms  # noqa: E402
from ladder import run_meta  # noqa: E402
from ladder.json_safe import json_safe  # noqa: E402
from real_models import BUILDERS  # noqa: E402

CAUSAL = ("llama", "gpt2")
VARIANTS = ("eager", "optimize_", "compile", "optimize_+compile")


def steps(arch: str, small: bool) -> list[tuple[str, int, int]]:
    """(step, batch, tokens): prefill 8 × 512, and for causal LMs a decode step at batch 1 and 8."""
    prompt = 16 if small else 512
    out = [("prefill", 8 if not small else 2, prompt)]
    if arch in CAUSAL:
        out += [("decode", 1, prompt), ("decode", 8 if not small else 2, prompt)]
    return out


def variant_model(stock: torch.nn.Module, variant: str) -> torch.nn.Module:
    import torch_memopt

    model = copy.deepcopy(stock)
    if variant.startswith("optimize_"):
        torch_memopt.optimize_(model)
    if variant.endswith("compile"):
        torch._dynamo.reset()
        model = torch.compile(model)
    return model


def make_call(real, model, step: str, batch: int, tokens: int):
    """A no-argument call running one step, and what it returns to compare."""
    inputs = real.make_input(batch, tokens)
    if step == "prefill":
        return lambda: real.logits(model(**inputs))
    with torch.inference_mode():
        cache = model(**inputs, use_cache=True).past_key_values  # the prompt, once
    next_token = inputs["input_ids"][:, -1:]

    def decode():
        extra = cache.get_seq_length() - tokens
        if extra > 0:  # back to the prompt: the same cache for every call (a negative
            cache.crop(-extra)  # crop counts tokens to drop, in transformers 4 and 5 alike)
        return real.logits(model(input_ids=next_token, past_key_values=cache, use_cache=True))

    return decode


def cosine(a: torch.Tensor, b: torch.Tensor) -> float:
    return torch.nn.functional.cosine_similarity(a.float().flatten(), b.float().flatten(), dim=0).item()


def measure(arch: str, args) -> list[dict]:
    import torch_memopt

    dtype = torch.float32 if args.device == "cpu" else torch.bfloat16
    real = BUILDERS[arch](args.small, args.device, dtype)
    records = []
    for step, batch, tokens in steps(arch, args.small):
        reference, base_ms = None, None
        for variant in VARIANTS:
            record = {"model": arch, "step": step, "batch": batch, "tokens": tokens,
                      "variant": variant, "status": "ok", "reason": None}
            records.append(record)
            try:
                model = variant_model(real.model, variant)
                with torch.inference_mode(), torch_memopt.use_cpu_kernels(args.device == "cpu"):
                    call = make_call(real, model, step, batch, tokens)
                    out = call()
                    reference = out if reference is None else reference
                    record["cosine"] = cosine(out, reference)
                    if record["cosine"] < 0.999:
                        record.update(status="wrong", reason=f"cosine {record['cosine']:.5f}")
                        continue
                    record["ms"] = median_ms(call, args.reps, args.device)
                if variant == "eager":
                    base_ms = record["ms"]
                record["speedup"] = base_ms / record["ms"] if base_ms else None
            except Exception as exc:  # one variant failing must not end the run
                record.update(status="error", reason=f"{type(exc).__name__}: {str(exc)[:200]}")
            print(line(record), flush=True)
            del model
    return records


def line(r: dict) -> str:
    if r.get("ms") is None:
        figures = f"{r['status']}: {r['reason']}"
    else:
        speedup = f"{r['speedup']:5.2f}×" if r.get("speedup") else "    —"
        figures = f"{r['ms']:9.2f} ms  {speedup}"
    return f"{r['model']:6s} {r['step']:7s} b{r['batch']:<2d} {r['variant']:18s} {figures}"


def markdown(document: dict) -> str:
    """The README's table: one row per (model, step, batch), each variant's latency and its
    speed-up over stock eager."""
    meta = document["meta"]
    rows: dict[tuple, dict] = {}
    for r in document["records"]:
        rows.setdefault((r["model"], r["step"], r["batch"], r["tokens"]), {})[r["variant"]] = r

    def cell(r):
        if r is None or r.get("ms") is None:
            return "—" if r is None else r["status"]
        return f"{r['ms']:.2f} ({r['speedup']:.2f}×)" if r.get("speedup") else f"{r['ms']:.2f}"

    lines = [f"{meta.get('gpu')}, torch {meta.get('torch')}, CUDA {meta.get('cuda')}, "
             f"{str(meta.get('date'))[:10]}; bfloat16; median latency in ms of the whole call "
             "(host included), × = stock eager / this.", "",
             "| model | step | batch × tokens | " + " | ".join(VARIANTS) + " |",
             "|---|---|---|" + "---:|" * len(VARIANTS)]
    for (model, step, batch, tokens), by_variant in rows.items():
        shape = f"{batch} × {tokens}" if step == "prefill" else f"{batch} × 1 (after {tokens})"
        lines.append(f"| {model} | {step} | {shape} | "
                     + " | ".join(cell(by_variant.get(v)) for v in VARIANTS) + " |")
    return "\n".join(lines)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(sorted(BUILDERS)),
                        help=f"comma-separated, of {', '.join(sorted(BUILDERS))}")
    parser.add_argument("--small", action="store_true", help="small configs (the plumbing)")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "bench_model_h200.json")
    args = parser.parse_args(argv)
    args.models = [m for m in args.models.split(",") if m]
    unknown = set(args.models) - set(BUILDERS)
    if unknown:
        parser.error(f"unknown models {sorted(unknown)}; choose from {sorted(BUILDERS)}")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        print("bench_model.py --device cuda needs a CUDA GPU")
        return 2
    records = []
    for arch in args.models:
        records += measure(arch, args)
    document = {"meta": {**run_meta.environment(args.device == "cuda", 0), "argv": sys.argv[1:],
                         "small": args.small, "device": args.device},
                "records": records}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(json_safe(document), indent=1) + "\n")
    print(f"wrote {args.out}")
    return 1 if any(r["status"] == "wrong" for r in records) else 0


if __name__ == "__main__":
    sys.exit(main())
