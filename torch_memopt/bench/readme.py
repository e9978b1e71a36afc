"""README.md's headline table and the whole of docs/results.md, generated from the
results JSON under benchmarks/results/ (written on the H200 by ``python -m
torch_memopt.bench``): tables are never typed, and each names its run's GPU, versions,
date and commit.

    python -m torch_memopt.bench.readme           # rewrite both
    python -m torch_memopt.bench.readme --check   # exit 1 when either is stale (CI)

``--check`` regenerates both in memory and compares: a results file newer than the
tables made from it fails it.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import plot, report
from .environment import CHECKOUT
from .record import geomean
from .results import file_name, read
from .suites import DEFAULT, SUITES

RESULTS = CHECKOUT / "benchmarks" / "results"
README = CHECKOUT / "README.md"
DOCS = CHECKOUT / "docs" / "results.md"
GPU = "h200"  # the GPU of record: the tables show its runs
BEGIN, END = "<!-- headline:begin -->", "<!-- headline:end -->"
PROBE_JSON = RESULTS / f"probe_{GPU}.json"
PROBE_PLOTS = (("probe_latency.png", "Latency against working-set size"),
               ("probe_bank_conflicts.png", "Shared-memory throughput against stride"))


def results_path(suite: str) -> Path | None:
    """The suite's full run on the GPU of record, else its --quick run, else None."""
    for quick in (False, True):
        path = RESULTS / file_name(suite, GPU, quick)
        if path.exists():
            return path
    return None


def link(path: Path, page: Path) -> str:
    """``path`` relative to the folder of the page that links to it."""
    return Path(os.path.relpath(path, page.parent)).as_posix()


def run_line(doc: dict, path: Path) -> str:
    meta = doc["meta"]
    quick = " --quick" if meta.get("quick") else ""
    copy = f"; copy ceiling {meta['copy_gbps']:,.0f} GB/s" if meta.get("copy_gbps") else ""
    return (f"{meta.get('gpu') or 'CPU'} ({meta.get('sm_count')} SMs, driver {meta.get('driver')}), "
            f"torch {meta['torch']}, CUDA {meta['cuda']}, {meta['date'][:10]}, commit "
            f"{meta.get('git') or 'unknown'}: `python -m torch_memopt.bench {doc['suite']}{quick}`; "
            f"{meta.get('timing')}{copy}. Source: `{path.relative_to(CHECKOUT).as_posix()}`.")


def kernels_table(kernels: dict) -> str:
    """The ladder's ``sections.kernels``: each rung's kernels as kernel_info reports them."""
    lines = ["| rung | kernel | registers / thread | static smem B | local B |",
             "|---|---|---:|---:|---:|"]
    for rung, infos in kernels.items():
        for info in infos:
            lines.append(f"| {rung} | {info['label']} | {info['registers']} | "
                         f"{info['static_shared_bytes']:,} | {info['local_bytes']} |")
    return "\n".join(lines)


def suite_section(module, doc: dict, path: Path) -> str:
    variant = getattr(module, "SUMMARY_VARIANT", "auto")
    parts = [f"## {module.NAME}: {module.TITLE}", module.ABOUT, run_line(doc, path),
             report.markdown(doc["records"], getattr(module, "COLUMNS", []),
                             getattr(module, "LAYOUT", "records"), variant or "auto")]
    summary = report.summary_lines(doc["records"], variant)
    if summary:
        parts.append("\n".join(f"- {line}" for line in summary))
    if hasattr(module, "digest"):
        parts.append(module.digest(doc["records"], doc["meta"]))
    chart = path.with_suffix(".png")
    if chart.exists():
        parts.append(f"![{module.NAME}: the rate of every implementation]({link(chart, DOCS)})")
    ratio_chart = plot.ratio_chart_path(path)
    if ratio_chart.exists():
        parts.append(f"![{module.NAME}: ours ÷ the best peer]({link(ratio_chart, DOCS)})")
    if doc["sections"].get("kernels"):
        parts += ["Each rung's kernels, from `torch_memopt.kernel_info` (cudaFuncGetAttributes on "
                  "the GPU of the run): registers a thread, static shared memory, local memory "
                  "(spills and run-time-indexed arrays).", kernels_table(doc["sections"]["kernels"])]
    return "\n\n".join(parts)


def probe_section() -> str:
    doc = read(PROBE_JSON)
    meta = doc["meta"]
    lines = ["## probe: the memory hierarchy of this GPU, measured",
             "`python -m torch_memopt.probe`: each row a quantitative claim of our source "
             "material, what this GPU measured and the verdict (holds within 25%, off by how "
             "much, or does not apply here).",
             f"{meta['gpu']} ({meta['sm_count']} SMs), torch {meta['torch']}, CUDA {meta['cuda']}, "
             f"{meta['date'][:10]}; {sum(doc['seconds'].values()):.0f} s for all probes. Source: "
             f"`{PROBE_JSON.relative_to(CHECKOUT).as_posix()}`.",
             "| probe | claim | measured | verdict |\n|---|---|---|---|\n" + "\n".join(
                 f"| {r['probe']} | {r['claim']} | {r['measured']} | {r['verdict']} |"
                 for r in doc["rows"])]
    for name, alt in PROBE_PLOTS:
        plot = PROBE_JSON.parent / "probe" / name
        if plot.exists():
            lines.append(f"![{alt}]({link(plot, DOCS)})")
    return "\n\n".join(lines)


def docs_text() -> str:
    parts = ["# Results",
             "Generated by `python -m torch_memopt.bench.readme` from the JSON under "
             "`benchmarks/results/`; do not edit by hand. In every table `× best` is the "
             "fastest peer's time / ours (> 1: ours is faster), a wrong result is never timed, "
             "and each section names the run it comes from."]
    for name, module in SUITES.items():
        path = results_path(name)
        if path is None:
            parts.append(f"## {name}: {module.TITLE}\n\n_No results yet: run "
                         f"`python -m torch_memopt.bench {name}` on the {GPU.upper()}._")
        else:
            parts.append(suite_section(module, read(path), path))
    if PROBE_JSON.exists():
        parts.append(probe_section())
    return "\n\n".join(parts) + "\n"


def headline() -> str:
    """The README's table: per op and token count, the geomean of ``auto`` ÷ best peer
    over the default suite's model layers; the last column over every count, with the worst."""
    path = results_path(DEFAULT)
    if path is None:
        return f"_No results yet: run `python -m torch_memopt.bench` on the {GPU.upper()}._"
    doc = read(path)
    timed = [r for r in doc["records"] if r["variant"] == "auto" and r["status"] == "ok" and r["ratio"]]
    tokens = sorted({r["extra"]["tokens"] for r in timed})
    header = ("| op | " + " | ".join(f"{t} tok" for t in tokens) + " | all: geomean (worst) |\n"
              "|---|" + "---:|" * (len(tokens) + 1))
    rows = []
    for summary in report.summarize(timed):
        mine = [r for r in timed if r["op"] == summary.op]
        cells = []
        for t in tokens:
            ratios = [r["ratio"] for r in mine if r["extra"]["tokens"] == t]
            cells.append(report.times(geomean(ratios)) if ratios else "—")
        rows.append(f"| {summary.op} | " + " | ".join(cells)
                    + f" | {report.times(summary.geomean)} ({report.times(summary.worst['ratio'])}) |")
    meta = doc["meta"]
    return (f"`auto` ÷ the best stock path (cuBLAS, eager, torch.compile, Liger-Kernel), speed, "
            f"geomean over the layers of Llama-3-8B, Mistral-7B, GPT-2 and BERT-base at each "
            f"token count (> 1: ours is faster). {meta.get('gpu')}, torch {meta['torch']}, "
            f"{meta['date'][:10]}, commit {meta.get('git') or 'unknown'}"
            f"{' (a --quick run)' if meta.get('quick') else ''}; every case in "
            f"[docs/results.md](docs/results.md).\n\n{header}\n" + "\n".join(rows)
            + gemm_headline())


def gemm_headline() -> str:
    """The GEMM's own line under the table: ``auto`` ÷ cuBLAS by M over the Llama layers
    (the transformer-gemm suite's digest), when that suite has run on the GPU of record."""
    module = SUITES.get("transformer-gemm")
    path = results_path("transformer-gemm") if module else None
    if path is None:
        return ""
    doc = read(path)
    meta = doc["meta"]
    return (f"\n\nThe GEMM alone, `linear` ÷ cuBLAS over the linear layers of Llama-3-8B and "
            f"Llama-2-7B by tokens M ({meta.get('gpu')}, {meta['date'][:10]}, commit "
            f"{meta.get('git') or 'unknown'}; the transformer-gemm suite):\n\n"
            + module.digest(doc["records"], meta))


def readme_text(current: str) -> str:
    head, rest = current.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{headline()}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m torch_memopt.bench.readme",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if either file is stale")
    args = parser.parse_args(argv)
    fresh = {README: readme_text(README.read_text()), DOCS: docs_text()}
    stale = [path for path, text in fresh.items()
             if not path.exists() or path.read_text() != text]
    if args.check:
        for path in stale:
            print(f"{path.relative_to(CHECKOUT)} is stale: run python -m torch_memopt.bench.readme",
                  file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(fresh[path])
        print(f"wrote {path.relative_to(CHECKOUT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
