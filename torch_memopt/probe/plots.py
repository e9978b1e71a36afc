"""The probe's PNGs: the latency staircase (cycles against working-set size, log x: the
L1, L2 and HBM plateaus) and shared-memory throughput against access stride (the bank
conflicts). matplotlib is imported only here, only when --plot-dir is given."""
from __future__ import annotations

from pathlib import Path


def draw(series: dict, directory: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    directory.mkdir(parents=True, exist_ok=True)
    written = []
    if "latency" in series:
        data = series["latency"]
        fig, ax = plt.subplots(figsize=(7, 4))
        ax.plot([b / 1024 for b in data["bytes"]], data["cycles"], marker="o")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("working set (KB)")
        ax.set_ylabel("cycles a dependent load")
        ax.set_title("Latency staircase: L1, L2, HBM")
        ax.grid(True, alpha=0.3)
        path = directory / "probe_latency.png"
        fig.tight_layout(), fig.savefig(path, dpi=120), plt.close(fig)
        written.append(path)
    if "bank_conflicts" in series:
        data = series["bank_conflicts"]
        fig, ax = plt.subplots(figsize=(7, 4))
        labels = ["bcast" if s == 0 else str(s) for s in data["stride"]]
        ax.bar(labels, [g / 1e3 for g in data["gbps"]])
        ax.set_xlabel("stride between lanes (4-byte words)")
        ax.set_ylabel("shared-memory read TB/s (chip)")
        ax.set_title("Bank conflicts")
        path = directory / "probe_bank_conflicts.png"
        fig.tight_layout(), fig.savefig(path, dpi=120), plt.close(fig)
        written.append(path)
    return written
