"""Draw GB/s against N for the norms and softmax from the results JSON of ``benchmarks/norm_bench.py``.

    python benchmarks/plot_norm.py [--json benchmarks/results/norm_bench_h200.json]
                                   [--out <the JSON's folder>/<its stem>.png]

One subplot per (op, dtype), ops down, dtypes across. In each: GB/s (y) against N (x,
logarithmic) for every variant of ours (``auto`` drawn thickest), eager and
torch.compile (dashed; Liger-Kernel too where it was measured), and the copy ceiling of
the same run (``copy.gbps``) as a dotted horizontal line. Bandwidth rows only: the
decode rows are judged in µs, not GB/s. Where a call has several row counts at the same
N, the point drawn is the one that moved the most bytes (the least launch-bound). Wrong,
skipped and failed calls are not drawn. Without ``--json``, the full run's file is used,
else the ``--quick`` one. Needs matplotlib (not the GPU machine): exit 2 without it.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
JSON_FILES = ("norm_bench_h200.json", "norm_bench_quick_h200.json")  # as readme_tables.NORM_FILES
OPS = ("layer_norm", "rms_norm", "softmax")
PEERS = ("eager", "compile", "liger")
AUTO = "auto"
# A fixed colour per name, so a variant reads the same in every subplot (tab10's order).
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")


def default_json() -> Path:
    return next((RESULTS / n for n in JSON_FILES if (RESULTS / n).exists()), RESULTS / JSON_FILES[0])


def series(document: dict) -> dict[tuple[str, str], dict[str, list[tuple[int, float]]]]:
    """(op, dtype) -> {call name: [(N, GB/s), ...] sorted by N}, bandwidth rows that
    were timed and right; at a repeated N the record that moved the most bytes wins."""
    best: dict[tuple[str, str, str, int], dict] = {}
    for r in document["records"]:
        if r["group"] != "bandwidth" or r["status"] != "ok" or r["correct"] is False or not r["gbps"]:
            continue
        key = (r["op"], r["dtype"], r["variant"], r["shape"]["N"])
        if key not in best or r["bytes"] > best[key]["bytes"]:
            best[key] = r
    out: dict[tuple[str, str], dict[str, list[tuple[int, float]]]] = {}
    for (op, dtype, name, n), r in best.items():
        out.setdefault((op, dtype), {}).setdefault(name, []).append((n, r["gbps"]))
    for by_name in out.values():
        for points in by_name.values():
            points.sort()
    return out


def _names(data: dict) -> list[str]:
    """Every call name drawn: auto, the other variants in the run's order, then the peers."""
    seen = [name for by_name in data.values() for name in by_name]
    ours = [n for n in dict.fromkeys(seen) if n not in PEERS]
    ours.sort(key=lambda n: n != AUTO)  # stable: auto first, the rest in measured order
    return ours + [p for p in PEERS if p in seen]


def plot(document: dict, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on the machines this runs on
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullLocator

    data = series(document)
    ops = [op for op in OPS if any(key[0] == op for key in data)]
    dtypes = list(dict.fromkeys(dtype for _, dtype in data))  # in the run's order
    names = _names(data)
    colour = {name: COLOURS[i % len(COLOURS)] for i, name in enumerate(names)}
    ceiling = (document.get("copy") or {}).get("gbps")
    figure, axes = plt.subplots(len(ops), len(dtypes), figsize=(6 * len(dtypes), 4 * len(ops)),
                                squeeze=False)
    for i, op in enumerate(ops):
        for j, dtype in enumerate(dtypes):
            ax = axes[i][j]
            by_name = data.get((op, dtype), {})
            for name in names:
                if name not in by_name:
                    continue
                ns, gbps = zip(*by_name[name])
                peer = name in PEERS
                # auto under the rest, larger: where a variant is auto's pick, both show.
                ax.plot(ns, gbps, marker="o", markersize=8 if name == AUTO else 4, color=colour[name],
                        label=name, linestyle="--" if peer else "-",
                        linewidth=3 if name == AUTO else 1.2, zorder=1 if name == AUTO else 2)
            if ceiling:
                ax.axhline(ceiling, color="black", linestyle=":", linewidth=1,
                           label=f"copy {ceiling:,.0f} GB/s")
            ax.set_xscale("log")
            all_n = sorted({n for points in by_name.values() for n, _ in points})
            ax.xaxis.set_minor_locator(NullLocator())  # only the measured N are ticked
            ax.set_xticks(all_n, [str(n) for n in all_n], rotation=30)
            ax.set_ylim(0, 1.1 * max([ceiling or 0] + [g for p in by_name.values() for _, g in p]))
            ax.set_title(f"{op}, {dtype}")
            ax.set_xlabel("N (elements reduced per row)")
            ax.set_ylabel("GB/s (bytes moved / median time)")
            ax.grid(True, alpha=0.3)
    # One legend for the figure, in ``names`` order: softmax's "online" and the norms'
    # "vectorized" are each in some subplots only.
    handles = {}
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    labels = [n for n in names if n in handles] + [n for n in handles if n not in names]
    figure.legend([handles[n] for n in labels], labels, loc="lower center",
                  ncol=min(len(labels), 6), fontsize=9)
    meta = document.get("meta") or {}
    quick = " (--quick run)" if meta.get("quick") else ""
    figure.suptitle(f"Norms and softmax on {meta.get('gpu')}{quick}: torch {meta.get('torch')}, "
                    f"CUDA {meta.get('cuda')}, {str(meta.get('date'))[:10]}")
    figure.tight_layout(rect=(0, 0.07, 1, 1))  # room at the bottom for the shared legend
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=120)
    plt.close(figure)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=None,
                        help=f"results JSON (default: {' or else '.join(JSON_FILES)} in benchmarks/results)")
    parser.add_argument("--out", type=Path, default=None, help="PNG (default: <json stem>.png beside it)")
    args = parser.parse_args(argv)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("plot_norm.py needs matplotlib: pip install matplotlib", file=sys.stderr)
        return 2
    path = args.json or default_json()
    if not path.exists():
        print(f"{path} does not exist: run benchmarks/norm_bench.py first", file=sys.stderr)
        return 1
    document = json.loads(path.read_text())
    if not series(document):
        print(f"{path} holds no timed bandwidth rows: nothing to plot", file=sys.stderr)
        return 1
    out = args.out or path.with_suffix(".png")
    plot(document, out)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
