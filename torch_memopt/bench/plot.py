"""The charts of a results document. ``draw``: a subplot per (op, dtype), the rate of every
implementation (ours as solid lines, ``auto`` thickest; the peers dashed) across the
suite's cases, the copy ceiling dotted where the rate is GB/s. Log y: naive rungs and
cuBLAS sit 100× apart. ``draw_ratio``: ours ÷ the best peer against one swept size, for
suites that set ``RATIO_CHART``. matplotlib is imported here only, when a plot is asked for.

    python -m torch_memopt.bench.plot benchmarks/results/norms_h200.json [--out PNG]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .calls import shape_text
from .results import read


def series(records: list[dict]) -> dict[tuple[str, str], dict]:
    """(op, dtype) -> {"cases": [case text], "unit", "lines": {impl: [rate or None]}}."""
    panels: dict[tuple[str, str], dict] = {}
    for r in records:
        panel = panels.setdefault((r["op"], r["dtype"]), {"cases": [], "lines": {}, "rows": {}})
        case = f"{shape_text(r['shape'])} {r['label']}".strip()
        if case not in panel["cases"]:
            panel["cases"].append(case)
        work, scale, panel["unit"] = ((r["flop"], 1e12, "TFLOP/s") if r["flop"]
                                      else (r["bytes"], 1e9, "GB/s"))
        rates = {r["variant"]: r["ours_us"] if r["status"] == "ok" else None, **r["peers"]}
        for impl, us in rates.items():
            rate = work / (us * 1e-6) / scale if us and work else None
            panel["rows"].setdefault(impl, {})[case] = rate
    for panel in panels.values():
        panel["lines"] = {impl: [by_case.get(c) for c in panel["cases"]]
                          for impl, by_case in panel.pop("rows").items()}
    return panels


def _pyplot():
    """matplotlib.pyplot on the file-only Agg backend, or None when matplotlib is missing."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")  # files only: no display on the machines this runs on
    import matplotlib.pyplot as plt
    return plt


def _save(plt, figure, out: Path) -> Path:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=110)
    plt.close(figure)
    return out


def draw(document: dict, out: Path) -> Path | None:
    """Write the chart to ``out``; None when matplotlib is not installed."""
    plt = _pyplot()
    if plt is None:
        return None
    peers = {name for r in document["records"] for name in r["peers"]}
    panels = series(document["records"])
    if not panels:
        return None
    ceiling = document["meta"].get("copy_gbps")
    columns = min(2, len(panels))
    rows = -(-len(panels) // columns)
    figure, axes = plt.subplots(rows, columns, figsize=(7 * columns, 4.2 * rows), squeeze=False)
    for ax, ((op, dtype), panel) in zip(axes.flat, panels.items()):
        xs = range(len(panel["cases"]))
        for impl, rates in panel["lines"].items():
            points = [(x, v) for x, v in zip(xs, rates) if v]
            if not points:
                continue
            ax.plot(*zip(*points), marker="o", markersize=6 if impl == "auto" else 3, label=impl,
                    linestyle="--" if impl in peers else "-", linewidth=2.5 if impl == "auto" else 1.2)
        if ceiling and panel["unit"] == "GB/s":
            ax.axhline(ceiling, color="black", linestyle=":", linewidth=1, label=f"copy {ceiling:,.0f}")
        ax.set_yscale("log")
        ax.set_xticks(list(xs), panel["cases"], rotation=35, ha="right", fontsize=7)
        ax.set_ylabel(panel["unit"])
        ax.set_title(f"{op}, {dtype}")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    meta = document["meta"]
    figure.suptitle(f"{document['suite']} on {meta.get('gpu') or 'CPU'}, torch {meta.get('torch')}, "
                    f"{str(meta.get('date'))[:10]}, commit {meta.get('git')}")
    figure.tight_layout()
    return _save(plt, figure, out)


def _field(record: dict, key: str):
    """A record's own field (``label``) or one of its extras (``tokens``)."""
    return record["extra"][key] if key in record["extra"] else record[key]


def ratio_chart_path(json_path: Path) -> Path:
    """Where a suite's ratio chart lies: beside its JSON, ``<name>_ratio.png``."""
    json_path = Path(json_path)
    return json_path.with_name(json_path.stem + "_ratio.png")


def draw_ratio(document: dict, out: Path, x_key: str, line_key: str) -> Path | None:
    """The second chart of suites that sweep one size (``RATIO_CHART = (x_key, line_key)``):
    ours (``auto``) ÷ the best peer against ``x_key`` (log x), a line per ``line_key``
    (each a record field or one of its extras), a panel per dtype, 1.0 dotted. None
    without matplotlib or records."""
    plt = _pyplot()
    if plt is None:
        return None
    panels: dict[str, dict[str, list]] = {}
    for r in document["records"]:
        if r["variant"] == "auto" and r["status"] == "ok" and r.get("ratio"):
            line = panels.setdefault(r["dtype"], {}).setdefault(str(_field(r, line_key)), [])
            line.append((_field(r, x_key), r["ratio"]))
    if not panels:
        return None
    figure, axes = plt.subplots(1, len(panels), figsize=(7 * len(panels), 4.5), squeeze=False)
    for ax, (dtype, lines) in zip(axes.flat, panels.items()):
        for name, points in lines.items():
            ax.plot(*zip(*sorted(points)), marker="o", markersize=3, linewidth=1.2, label=name)
        ax.axhline(1.0, color="black", linestyle=":", linewidth=1)
        ax.set_xscale("log", base=2)
        ax.set_xlabel(x_key)
        ax.set_ylabel("ours ÷ best peer (higher is faster)")
        ax.set_title(dtype)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    meta = document["meta"]
    figure.suptitle(f"{document['suite']} on {meta.get('gpu') or 'CPU'}, commit {meta.get('git')}")
    figure.tight_layout()
    return _save(plt, figure, out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m torch_memopt.bench.plot",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("json", type=Path, help="a results document")
    parser.add_argument("--out", type=Path, help="the PNG (default: beside the JSON)")
    args = parser.parse_args(argv)
    out = draw(read(args.json), args.out or args.json.with_suffix(".png"))
    if out is None:
        print("nothing drawn: matplotlib is missing or the document has no records", file=sys.stderr)
        return 2
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
