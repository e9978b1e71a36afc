"""``python -m torch_memopt.probe``: the memory hierarchy of this GPU, measured, beside
every claim of our source material (issue 7).

    python -m torch_memopt.probe                 # every probe (under 3 minutes on an H200)
    python -m torch_memopt.probe --quick         # smaller sizes (under 30 s)
    python -m torch_memopt.probe --out probe.json --plot-dir plots/

Prints one row per claim (probe, claim, measured, verdict), then writes the rows and the
raw series to --out (JSON) and the latency staircase and bank-conflict plots to
--plot-dir (PNG, matplotlib). Exit 2 without a GPU or a CUDA build of torch_memopt.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

PROBES = ("latency", "shared_memory", "global_memory", "aos_soa", "constant_memory",
          "local_memory", "occupancy", "unified_memory")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m torch_memopt.probe",
                                     description="The memory hierarchy of this GPU, measured, "
                                                 "beside every claim of our source material.")
    parser.add_argument("--quick", action="store_true", help="smaller sizes: under 30 s")
    parser.add_argument("--out", type=Path, default=None, help="JSON of the rows and series")
    parser.add_argument("--plot-dir", type=Path, default=None, help="PNG plots go here")
    parser.add_argument("--only", default=",".join(PROBES),
                        help=f"comma-separated probes, of {', '.join(PROBES)}")
    args = parser.parse_args(argv)
    args.only = [p for p in args.only.split(",") if p]
    unknown = set(args.only) - set(PROBES)
    if unknown:
        parser.error(f"unknown probes {sorted(unknown)}; choose from {', '.join(PROBES)}")
    return args


def gpu_missing() -> str | None:
    """Why the probe cannot run here, or None."""
    import torch

    import torch_memopt

    if not torch_memopt.built_with_cuda():
        return "this build of torch_memopt has no CUDA kernels (nvcc not found, or MEMOPT_CPU_ONLY=1)"
    if not torch.cuda.is_available():
        return "no CUDA GPU on this machine"
    return None


def table(rows) -> str:
    widths = [max(len(str(getattr(r, f))) for r in rows) for f in ("probe", "claim", "measured")]
    head = ["probe".ljust(widths[0]), "claim".ljust(widths[1]), "measured".ljust(widths[2]), "verdict"]
    lines = ["  ".join(head)]
    for r in rows:
        lines.append("  ".join([r.probe.ljust(widths[0]), r.claim.ljust(widths[1]),
                                r.measured.ljust(widths[2]), r.verdict]))
    return "\n".join(lines)


def main(argv=None) -> int:
    args = parse_args(argv)
    missing = gpu_missing()
    if missing:
        print(f"torch_memopt.probe needs a CUDA GPU: {missing}")
        return 2
    import torch

    from torch_memopt.probe import hierarchy, mistakes, plots

    runners = {"latency": hierarchy.latency, "shared_memory": hierarchy.shared_memory,
               "global_memory": hierarchy.global_memory, "aos_soa": mistakes.aos_soa,
               "constant_memory": mistakes.constant_memory, "local_memory": mistakes.local_memory,
               "occupancy": mistakes.occupancy, "unified_memory": mistakes.unified_memory}
    rows, series, seconds = [], {}, {}
    start = time.perf_counter()
    for i, name in enumerate(args.only, 1):
        print(f"[{i}/{len(args.only)}] {name} ...", end="", flush=True)
        began = time.perf_counter()
        got, data = runners[name](args.quick)
        torch.cuda.synchronize()
        seconds[name] = time.perf_counter() - began
        rows += got
        series.update(data)
        print(f" {seconds[name]:.1f} s", flush=True)
    total = time.perf_counter() - start
    print()
    print(table(rows))
    print(f"\n{len(rows)} claims in {total:.0f} s on {torch.cuda.get_device_name(0)}")
    if args.out:
        from torch_memopt.probe.record import document

        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(document([dataclasses.asdict(r) for r in rows], series,
                                                seconds, args.quick), indent=1) + "\n")
        print(f"wrote {args.out}")
    if args.plot_dir:
        for path in plots.draw(series, args.plot_dir):
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
