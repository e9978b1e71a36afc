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
work included: this is the latency a user sees), median of --reps calls after warm-up,
the four variants sampled in turn (latency.interleaved_median_ms); no L2 flush (the
weights alone are 5-20× the L2). torch.compile: default mode, compiled afresh per model
and step (dynamo reset), warm before timing. Outputs of every variant are checked
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

from latency import interleaved_median_ms  # noqa: E402
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
        with torch.inference_mode(), torch_memopt.use_cpu_kernels(args.device == "cpu"):
            records += measure_step(real, arch, step, batch, tokens, args)
    return records


def measure_step(real, arch: str, step: str, batch: int, tokens: int, args) -> list[dict]:
    """Every variant of one step: built and checked against stock eager first, then the
    ones that pass timed interleaved (latency.interleaved_median_ms)."""
    records, calls, reference = {}, {}, None
    # One reset a step, not one a variant: both compiled variants are timed in turns,
    # and a reset between them would throw the first one's graphs away (and its
    # recompile would land in the timed warm-up). Two models a step stay far under
    # dynamo's recompile limit of 8.
    torch._dynamo.reset()
    for variant in VARIANTS:
        record = records[variant] = {"model": arch, "step": step, "batch": batch, "tokens": tokens,
                                     "variant": variant, "status": "ok", "reason": None,
                                     "timing": "interleaved"}
        try:
            call = make_call(real, variant_model(real.model, variant), step, batch, tokens)
            out = call()
            reference = out if reference is None else reference
            record["cosine"] = cosine(out, reference)
            if record["cosine"] < 0.999:
                record.update(status="wrong", reason=f"cosine {record['cosine']:.5f}")
            else:
                calls[variant] = call
        except Exception as exc:  # one variant failing must not end the run
            record.update(status="error", reason=f"{type(exc).__name__}: {str(exc)[:200]}")
    try:
        times = interleaved_median_ms(calls, args.reps, args.device)
    except Exception as exc:
        times = {}
        for variant in calls:
            records[variant].update(status="error", reason=f"{type(exc).__name__}: {str(exc)[:200]}")
    base_ms = times.get("eager")
    for variant, ms in times.items():
        records[variant].update(ms=ms, speedup=base_ms / ms if base_ms else None)
    for record in records.values():
        print(line(record), flush=True)
    return list(records.values())


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
    sequential = False
    for (model, step, batch, tokens), by_variant in rows.items():
        shape = (f"{batch} images × 197" if model == "vit" else f"{batch} × {tokens}"
                 if step == "prefill" else f"{batch} × 1 (after {tokens})")
        mark = ""
        if any(r.get("timing", "sequential") == "sequential" for r in by_variant.values()):
            sequential, mark = True, " †"
        lines.append(f"| {model}{mark} | {step} | {shape} | "
                     + " | ".join(cell(by_variant.get(v)) for v in VARIANTS) + " |")
    if sequential:
        lines += ["", "† timed one variant after another, in an earlier run: less robust to the "
                  "host's drift than the rows timed in turns (latency.interleaved_median_ms), "
                  "since these steps are bound by host work."]
    return "\n".join(lines)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(sorted(BUILDERS)),
                        help=f"comma-separated, of {', '.join(sorted(BUILDERS))}")
    parser.add_argument("--small", action="store_true", help="small configs (the plumbing)")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "bench_model_h200.json")
    parser.add_argument("--merge", action="store_true",
                        help="keep the records of other models already in --out")
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
    # Read once, before this run writes --out after its first model: re-read, the file
    # would hand this run's own first write back as an earlier run.
    earlier = json.loads(args.out.read_text()) if args.merge and args.out.exists() else None
    meta = {**run_meta.environment(args.device == "cuda", 0), "argv": sys.argv[1:],
            "small": args.small, "device": args.device}
    records = []
    for arch in args.models:
        records += [{**r, "run": meta["date"]} for r in measure(arch, args)]
        write(args, meta, records, earlier)  # after every model: a call cut short keeps what it measured
    return 1 if any(r["status"] == "wrong" for r in records) else 0


def write(args, meta: dict, records: list[dict], earlier: dict | None) -> None:
    """The JSON document to --out. With --merge, records of models this run did not
    measure are kept from the file that was there (one model a device call, one file),
    and earlier_runs holds the metas of the runs they come from (each record's "run" is
    its run's date). Records go in BUILDERS' order whichever call measured them, so the
    README's rows do not move between calls."""
    measured = {r["model"] for r in records}
    kept, earlier_runs = [], []
    if earlier is not None:
        kept = [r for r in earlier["records"] if r["model"] not in measured]
        runs = {r.get("run") for r in kept}
        candidates = [earlier["meta"], *earlier.get("earlier_runs", [])]
        # Records from before the "run" stamp cannot be traced: keep every candidate then.
        earlier_runs = candidates if None in runs else [m for m in candidates if m.get("date") in runs]
    document = {"meta": meta, "earlier_runs": earlier_runs,
                "records": sorted(kept + records, key=lambda r: list(BUILDERS).index(r["model"]))}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(json_safe(document), indent=1) + "\n")
    print(f"wrote {args.out}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
