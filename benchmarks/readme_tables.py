"""Regenerate the README's results section from the JSON under benchmarks/results/.

    python benchmarks/readme_tables.py            # rewrite README.md in place
    python benchmarks/readme_tables.py --check    # exit 1 if README.md is stale

Tables are never typed by hand: each comes from a results file written by
`python -m torch_memopt.bench --out ...` on the H200, and names its source,
GPU, torch and CUDA versions and date.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
README = ROOT / "README.md"
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"

LADDER_CHART = RESULTS / "gemm_ladder_h200.png"
# The full norm / softmax run when it has been made, else the --quick one committed first.
NORM_FILES = ("norm_bench_h200.json", "norm_bench_quick_h200.json")


def source(names: str | tuple[str, ...]) -> Path:
    """The first of ``names`` under RESULTS that exists, else the first (reported missing)."""
    names = (names,) if isinstance(names, str) else names
    return next((RESULTS / n for n in names if (RESULTS / n).exists()), RESULTS / names[0])


def _benchmarks_importable() -> None:
    """Put benchmarks/ on sys.path, so the renderers can reuse the benchmarks' own report
    code when this file is imported (tests) rather than run as a script."""
    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)


def ladder_tables(document: dict) -> str:
    """The GEMM ladder, resource and ncu tables, and the chart when it exists."""
    _benchmarks_importable()
    from ladder.markdown import section

    chart = LADDER_CHART.relative_to(ROOT).as_posix() if LADDER_CHART.exists() else None
    return section(document, chart)


def script_markdown(module: str) -> Callable[[dict], str]:
    """The renderer of a benchmark that writes its own README table: ``module``'s
    ``markdown(document)``, as the script prints it (tc_gemm.report, add_norm_bench,
    bench_model)."""
    def render(document: dict) -> str:
        _benchmarks_importable()
        return importlib.import_module(module).markdown(document)

    return render


def norm_tables(document: dict) -> str:
    """Norms and softmax against eager and torch.compile, and the chart that
    benchmarks/plot_norm.py writes beside the JSON (<json stem>.png) when it exists."""
    _benchmarks_importable()
    from norm_bench.report import markdown

    chart = source(NORM_FILES).with_suffix(".png")
    return markdown(document, chart.relative_to(ROOT).as_posix() if chart.exists() else None)


def norm_intro(name: str) -> str:
    run = ("`python benchmarks/norm_bench.py --quick` on the H200 (one shape per op, 16384×4096, "
           "and rms_norm at 1×4096; the full run has not been made yet)"
           if "quick" in name else "`python benchmarks/norm_bench.py` on the H200")
    return (f"LayerNorm, RMSNorm and last-dim softmax, {run}: `auto` against eager and "
            "torch.compile on the same inputs, float32 and bfloat16, with the device-to-device "
            "copy as the bandwidth ceiling; every variant is in the JSON and the chart "
            "(`python benchmarks/plot_norm.py`).")


CONSTANT_MEMORY_INTRO = (
    "The constant-memory case study of our source material, `python benchmarks/constant_memory.py` "
    "on the H200: LayerNorm's normalize step, y = (x − mean[row]) · rstd[row] · γ[c] + β[c] in "
    "fp32, in four kernels that differ only in where the per-row stats and per-channel weights "
    "are read from: plain global loads (`global`, the baseline), stats in `__constant__` "
    "(`const_stats`), weights in `__constant__` (`const_weights`) and weights through `__ldg` "
    "(`ldg_weights`). Each is checked against torch on the same inputs and timed with "
    "triton.testing.do_bench (median, L2 flushed); `× global` = global's time / the kernel's, "
    "beside the source's claim and whether it holds here.")

# Fixed text, not derived from the run: what the kernels' access patterns and the compiled
# PTX (nvcc -O3, sm_90a) say about each claim on Hopper.
CONSTANT_MEMORY_WHY = (
    "Why, as we read it (from the access patterns and the PTX, not profiled): every thread "
    "of a row reads that row's mean and rstd anyway, one "
    "warp-uniform address, and after the first warp they sit in L1, so a broadcast from the "
    "constant cache saves nothing measurable (`const_stats`). The constant cache serves one "
    "address per warp at a time, so per-channel weights, 32 different addresses in a warp, are "
    "read 32 ways serialized (`const_weights`). And the compiler already emits the read-only "
    "path (`ld.global.nc`, LDG.E.CONSTANT) for the baseline's `const float*` loads, since the "
    "kernel's one store goes through `float* __restrict__ y`, so an explicit `__ldg` changes "
    "nothing (`ldg_weights`).")


def constant_memory_verdict(kernel: str, vs_global: float) -> str:
    """Whether the source's claim for ``kernel`` holds at our speed-up over ``global``.

    The claims are 2.3× (const_stats), −15% (const_weights) and a win (ldg_weights); the
    bands leave room for timing noise (±2%) and for "about" (2× for 2.3×, 5-25% slower for
    −15%) without letting a claim pass on a figure that says something else. A kernel
    slower by far more than −15% is still called slower, since the direction was right.
    """
    if kernel == "global":
        return "baseline"
    if kernel == "const_stats":
        return "holds" if vs_global >= 2.0 else f"does not hold: {vs_global:.2f}× measured"
    if kernel == "const_weights":
        if vs_global < 0.75:
            return f"slower, as claimed, but by {round((1 - vs_global) * 100)}%"
        return "holds" if vs_global <= 0.95 else f"does not hold: {vs_global:.2f}× measured"
    if kernel == "ldg_weights":
        return "holds" if vs_global > 1.02 else f"no win: {vs_global:.2f}× measured"
    return "—"  # a kernel the source makes no claim about


def constant_memory_table(document: dict) -> str:
    """The case study: the run's conditions and shape, constant_memory.py's own table rows
    (so the README reads as the run printed) with a verdict on each claim, and why."""
    _benchmarks_importable()
    from constant_memory import speedup_rows

    meta, shape, records = document["meta"], document["shape"], document["records"]
    lines = [
        f"{meta['gpu']}, torch {meta['torch']}, CUDA {meta['cuda']}, {meta['date'][:10]}; "
        f"{shape['rows']} × {shape['channels']} (rows × channels), fp32.",
        "",
        "| kernel | µs | GB/s | × global | source's claim | verdict |",
        "|---|---:|---:|---:|---|---|",
    ]
    for record, row in zip(records, speedup_rows(records)):
        verdict = constant_memory_verdict(record["kernel"], record["vs_global"])
        lines.append("| " + " | ".join([*row, verdict]) + " |")
    return "\n".join(lines + ["", CONSTANT_MEMORY_WHY])


def probe_table(document: dict) -> str:
    """The probe's claims table and plots (python -m torch_memopt.probe --plot-dir)."""
    from torch_memopt.probe.markdown import markdown

    return markdown(document, (RESULTS / "probe").relative_to(ROOT).as_posix())


def _shape(shape: dict) -> str:
    return "×".join(str(v) for v in shape.values())


def _rate(value: float) -> str:
    return f"{value:.3g}" if value < 100 else f"{value:.0f}"


def table(document: dict) -> str:
    meta = document["meta"]
    lines = [
        f"{meta['gpu']} (sm {meta['capability']}), torch {meta['torch']}, CUDA {meta['cuda']}, "
        f"{meta['date'][:10]}; {meta['timing']}; L2 flush: {meta['l2_flush']}.",
        "",
        "| op | dtype | shape | variant | ours ms | stock ms | ours | stock | unit | speedup |",
        "|---|---|---|---|---:|---:|---:|---:|---|---:|",
    ]
    for r in document["results"]:
        lines.append(
            f"| {r['op']} | {r['dtype']} | {_shape(r['shape'])} | {r['variant']} | "
            f"{r['ours_ms']:.4g} | {r['stock_ms']:.4g} | {_rate(r['ours_rate'])} | "
            f"{_rate(r['stock_rate'])} | {r['rate_unit']} | {r['speedup_vs_stock']:.3g}× |"
        )
    return "\n".join(lines)


# Results files shown in the README, in order, with the sentence that introduces each
# and the function that renders it. The file may be a tuple of names, the first that
# exists shown (see source), and the intro a function of the name shown.
SHOWN = [
    (
        "bench_quick_h200.json",
        "`python -m torch_memopt.bench --quick` on the H200: each op's `auto` variant "
        "against the stock PyTorch op on the same inputs, measured when `auto` was still "
        "the naive first rung of every op (fp32 gemm/linear now run the warptiled rung: "
        "see the ladder below). `speedup` = stock time / ours; below 1 means stock is "
        "faster. These are the baselines the ladders start from, not the library's "
        "target speed.",
        table,
    ),
    (
        "gemm_ladder_h200.json",
        "The FP32 GEMM ladder, `python benchmarks/ladder.py --resources --ncu` on the H200: "
        "every rung of `memopt::gemm` and cuBLAS in one run, ours beside the published "
        "ladder's claims (speed-up over its naive kernel: coalescing 1.8×, shared-memory "
        "tiles 3.2×, double buffering 4.5×, register accumulation and float4 6.1×); "
        "`auto` is the rung the heuristic picks. Chart: `python benchmarks/plot_ladder.py`.",
        ladder_tables,
    ),
    (
        "tc_gemm_h200.json",
        "The bfloat16 / float16 tensor-core GEMM, `python benchmarks/tc_gemm.py` on the H200: "
        "`auto` and each rung (`mma`, `wgmma`, `gemv`, `splitk`) against cuBLAS (`torch.mm` / "
        "`F.linear`) on the same inputs in one run, beside the targets of the issue. "
        "Targets met: the odd shape 4095³ and some linear+bias and fp16 8192³ rows; the "
        "rest are missed, with what was tried, in docs/perf-notes.md.",
        script_markdown("tc_gemm.report"),
    ),
    (NORM_FILES, norm_intro, norm_tables),
    (
        "add_norm_h200.json",
        "The fused residual add + norm, `python benchmarks/add_norm_bench.py` on the H200: "
        "`add_rms_norm` / `add_layer_norm` (one pass: read input and residual, write the sum "
        "and the normalized output) against the two stock calls they replace, `s = x + r` "
        "then `F.rms_norm(s)` / `F.layer_norm(s)`, eager and under torch.compile, same inputs.",
        script_markdown("add_norm_bench"),
    ),
    ("constant_memory_h200.json", CONSTANT_MEMORY_INTRO, constant_memory_table),
    (
        "bench_model_h200.json",
        "Whole models, `python benchmarks/bench_model.py` on the H200: Hugging Face Llama "
        "(8 layers, hidden 2048, eager attention), GPT-2 small and BERT base, and timm "
        "ViT-B/16, random weights from configs, in bfloat16: stock eager, `optimize_`, "
        "torch.compile and `optimize_` + torch.compile on the same inputs; prefill 8 × 512 "
        "tokens and, for the causal LMs, one decode step at batch 1 and 8.",
        script_markdown("bench_model"),
    ),
    (
        "probe_h200.json",
        "The memory hierarchy of this GPU, measured: `python -m torch_memopt.probe --out "
        "benchmarks/results/probe_h200.json --plot-dir benchmarks/results/probe` on the H200. "
        "Each row is a quantitative claim of our source material, what this GPU measured and "
        "the verdict (holds within 25%, off by how much, or does not apply here).",
        probe_table,
    ),
]


def results_section() -> str:
    parts = []
    for names, intro, render_table in SHOWN:
        path = source(names)
        intro = intro(path.name) if callable(intro) else intro
        if not path.exists():
            parts.append(f"{intro}\n\n_No results yet: `{path.relative_to(ROOT)}` is missing._")
            continue
        document = json.loads(path.read_text())
        parts.append(f"{intro} Source: `{path.relative_to(ROOT)}`.\n\n{render_table(document)}")
    return "\n\n".join(parts)


def render(readme: str) -> str:
    head, rest = readme.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{results_section()}\n{END}{tail}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if README.md is stale")
    args = parser.parse_args(argv)
    current = README.read_text()
    fresh = render(current)
    if args.check:
        if fresh != current:
            print("README.md results are stale: run python benchmarks/readme_tables.py", file=sys.stderr)
            return 1
        return 0
    README.write_text(fresh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
