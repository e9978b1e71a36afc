"""The README's section "The memory hierarchy of this GPU, measured", from the probe's
JSON (benchmarks/results/probe_h200.json): the run's conditions, one row per claim, and
the plots when they were written beside the JSON."""
from __future__ import annotations

from pathlib import Path
from typing import Optional


def markdown(document: dict, plot_dir: Optional[str] = None) -> str:
    meta = document["meta"]
    lines = [f"{meta['gpu']} (sm {meta['capability']}, {meta['sm_count']} SMs), torch {meta['torch']}, "
             f"CUDA {meta['cuda']}, {meta['date'][:10]}"
             f"{' (--quick)' if meta.get('quick') else ''}; "
             f"{sum(document['seconds'].values()):.0f} s for all probes.", "",
             "| probe | claim | measured | verdict |", "|---|---|---|---|"]
    for row in document["rows"]:
        lines.append(f"| {row['probe']} | {row['claim']} | {row['measured']} | {row['verdict']} |")
    if plot_dir:
        for name, alt in (("probe_latency.png", "Latency against working-set size"),
                          ("probe_bank_conflicts.png", "Shared-memory throughput against stride")):
            if (Path(plot_dir) / name).exists():
                lines += ["", f"![{alt}]({Path(plot_dir, name).as_posix()})"]
    return "\n".join(lines)
