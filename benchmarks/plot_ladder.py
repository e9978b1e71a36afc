"""Draw the FP32 GEMM ladder chart from the results JSON of ``benchmarks/ladder.py``.

    python benchmarks/plot_ladder.py [--json benchmarks/results/gemm_ladder_h200.json]
                                     [--out benchmarks/results/gemm_ladder_h200.png]

Left: TFLOP/s per rung at 4096³ and 8192³ (the two largest sizes when those are
absent), cuBLAS of the same run as a dashed line per size. Right: speed-up over naive
at 4096³, ours as bars, the published ladder's claims as diamonds, cuBLAS as a line. Both axes are
logarithmic: naive and cuBLAS are 100× apart. Needs matplotlib (not the GPU machine).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ladder import tables
from ladder.rungs import CUBLAS, PUBLISHED_SPEEDUP, Size

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
COLOURS = ("#4C72B0", "#DD8452", "#55A868", "#C44E52")


def chart_sizes(document: dict) -> list[Size]:
    sizes = tables.sizes_of(document)
    wanted = [s for s in (tables.KEY_SIZE, tables.BIG_SIZE) if s in sizes]
    return wanted or sorted(sizes, key=lambda s: s.flop)[-2:]


def _records(document: dict) -> dict[tuple[str, Size], dict]:
    return {(r["variant"], Size(**r["shape"])): r for r in document["results"] if r["status"] == "ok"}


def plot(document: dict, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = _records(document)
    sizes = chart_sizes(document)
    rungs = [v for v in tables.variants_of(document) if v != CUBLAS]
    figure, (rates, speedups) = plt.subplots(
        1, 2, figsize=(14, 5.5), gridspec_kw={"width_ratios": [3, 2]})
    width = 0.8 / max(len(sizes), 1)
    for i, size in enumerate(sizes):
        colour = COLOURS[i % len(COLOURS)]
        xs = [j + (i - (len(sizes) - 1) / 2) * width for j in range(len(rungs))]
        values = [(records.get((r, size)) or {}).get("tflops") for r in rungs]
        bars = rates.bar([x for x, v in zip(xs, values) if v], [v for v in values if v],
                         width, color=colour, label=tables.size_label(size))
        rates.bar_label(bars, fmt="%.3g", fontsize=7, padding=1)
        cublas = records.get((CUBLAS, size))
        if cublas and cublas["tflops"]:
            rates.axhline(cublas["tflops"], color=colour, linestyle="--", linewidth=1,
                          label=f"cuBLAS {tables.size_label(size)}: {cublas['tflops']:.1f}")
    rates.set_yscale("log")
    rates.set_ylabel("TFLOP/s (2·M·N·K / median time)")
    rates.set_xticks(range(len(rungs)), rungs, rotation=30, ha="right")
    rates.set_title("fp32 TFLOP/s per rung")
    rates.legend(fontsize=8, loc="upper left")

    key = sizes[0] if sizes else None
    ours = [(records.get((r, key)) or {}).get("speedup_vs_naive") for r in rungs]
    label = f"ours, {tables.size_label(key)}" if key else "ours"
    bars = speedups.bar([j for j, v in enumerate(ours) if v], [v for v in ours if v],
                        0.6, color=COLOURS[0], label=label)
    speedups.bar_label(bars, fmt="%.3g×", fontsize=7, padding=1)
    cublas = records.get((CUBLAS, key))
    if cublas and cublas["speedup_vs_naive"]:
        speedups.axhline(cublas["speedup_vs_naive"], color="grey", linestyle="--", linewidth=1,
                         label=f"cuBLAS: {cublas['speedup_vs_naive']:.0f}×")
    claimed = [(j, PUBLISHED_SPEEDUP[r]) for j, r in enumerate(rungs) if r in PUBLISHED_SPEEDUP]
    if claimed:
        speedups.scatter([j for j, _ in claimed], [v for _, v in claimed], marker="D", color="black",
                         zorder=3, label="published claim")
    speedups.set_yscale("log")
    speedups.set_ylabel("speed-up over naive (same size, same run)")
    speedups.set_xticks(range(len(rungs)), rungs, rotation=30, ha="right")
    speedups.set_title("speed-up over naive: ours and the published ladder")
    speedups.legend(fontsize=8, loc="upper left")

    meta = document["meta"]
    figure.suptitle(f"FP32 GEMM ladder on {meta.get('gpu')}, torch {meta.get('torch')}, "
                    f"CUDA {meta.get('cuda')}, {str(meta.get('date'))[:10]}")
    figure.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=120)
    plt.close(figure)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=RESULTS / "gemm_ladder_h200.json")
    parser.add_argument("--out", type=Path, default=RESULTS / "gemm_ladder_h200.png")
    args = parser.parse_args(argv)
    document = json.loads(args.json.read_text())
    if not document.get("results"):
        print(f"{args.json} holds no timing results: nothing to plot", file=sys.stderr)
        return 1
    plot(document, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
