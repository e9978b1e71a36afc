"""Where a short norm call's time goes, split by the GPU's own clock (issue 17): the kernel
timer's figure for a call (CUDA events around it, L2 flushed) against the kernels' start and
end stamps that CUPTI records (torch.profiler), in the same process on the same inputs.

At 1-64 rows of 4096 bf16 ours runs 0.5-1.5 µs over Liger's and torch.compile's rms_norm
under the kernel timer, and 0.5-0.75 µs over them even with no weight at all
(benchmarks/results/tune/norm_latency_probe_*_h200.json); ncu put part of it inside the
kernel. This says, per call, which part is which:

- ``launch``: from the end of the pad kernel before the call (the timer's idle spin; the
  GPU is waiting on nothing else) to the start of the call's first kernel: the front end's
  work to start it (its parameters, its shared-memory carve-out, its blocks' dispatch);
- ``kernel``: from the first kernel's start to the last one's end (the kernel's own time,
  as ncu's gpu__time_duration, here without ncu's replays and cache control);
- ``events``: the kernel timer's figure for the same launches (start event right after the
  pad, end event after the call);
- ``kernels``: how many kernels a call launched.

Each rep is the kernel timer's: the 256 MiB zero flush, a pad of idle spinning, the call.
The flush's fill kernel marks where each rep starts in the trace. The kernel timer pads
each call by twice its own enqueue time, so a call with a slow launcher (Liger's Python
wrapper) idles the GPU longer after the flush than ours; ``--pads`` times every call
after the same pads, several of them: if a call's kernel gets faster with a longer pad,
the L2 was still writing the flush's dirty lines back, and the kernel timer's figures
favour the slow launchers.

    python benchmarks/tune/norm_kernel_trace.py [--op rms_norm|layer_norm] [--width 4096]
        [--rows 1 8 64 512] [--pads 200] [--reps 100] [--out trace.json]
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, str(Path(__file__).resolve().parent))
from norm_latency_probe import calls_for  # noqa: E402  (the probe's calls, the same inputs)

from torch_memopt.bench import results  # noqa: E402
from torch_memopt.bench.environment import describe  # noqa: E402
from torch_memopt.bench.timing import FLUSH_BYTES, SLEEP_CYCLES_PER_US  # noqa: E402

PADS_US = (200.0,)  # idle spin before each call: over any call's enqueue time under the profiler
FLUSH_KERNEL = "FillFunctor"  # the flush's zero_ kernel; no timed call launches one
PAD_KERNEL = "spin_kernel"  # torch.cuda._sleep's kernel (the pad, and the "empty kernel" call)


def device_kernels(prof) -> list[tuple[str, int, int]]:
    """(name, start ns, end ns) of every kernel the profiler saw, in start order."""
    out = []
    for event in prof.profiler.kineto_results.events():
        if event.device_type() != torch.autograd.DeviceType.CUDA:
            continue
        name = event.name()
        if name.startswith(("Memcpy", "Memset")):
            continue
        out.append((name, event.start_ns(), event.start_ns() + event.duration_ns()))
    return sorted(out, key=lambda k: k[1])


def split_reps(kernels: list[tuple[str, int, int]]) -> list[dict]:
    """Per rep (a flush kernel, then the pad, then the call's kernels): launch and kernel
    times in µs, and the call's kernel names."""
    reps, current = [], None
    for kernel in kernels:
        if FLUSH_KERNEL in kernel[0]:
            current = []
            reps.append(current)
        elif current is not None:
            current.append(kernel)
    out = []
    for rep in reps:
        if len(rep) < 2 or PAD_KERNEL not in rep[0][0]:
            continue  # a rep without its pad or its call (the profiler's first or last)
        pad, call = rep[0], rep[1:]
        out.append({"launch_us": (call[0][1] - pad[2]) / 1e3,
                    "kernel_us": (call[-1][2] - call[0][1]) / 1e3,
                    "names": [k[0] for k in call]})
    return out


def trace(call, reps: int, flush: torch.Tensor, pad_us: float) -> dict:
    """One call's reps under the profiler: medians of launch, kernel and event times."""
    for _ in range(3):  # warm: compile's autotuning, lazy module loads
        call()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for start, end in zip(starts, ends):
            flush.zero_()
            torch.cuda._sleep(int(pad_us * SLEEP_CYCLES_PER_US))
            start.record()
            call()
            end.record()
        torch.cuda.synchronize()
    split = split_reps(device_kernels(prof))
    if len(split) < reps // 2:
        raise SystemExit(f"only {len(split)} of {reps} reps found in the trace")
    names = sorted({" + ".join(n[:60] for n in rep["names"]) for rep in split})
    return {"launch_us": statistics.median(r["launch_us"] for r in split),
            "kernel_us": statistics.median(r["kernel_us"] for r in split),
            "events_us": statistics.median(s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends)),
            "kernels": statistics.median(len(r["names"]) for r in split),
            "names": names, "reps": len(split)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--op", choices=("rms_norm", "layer_norm"), default="rms_norm")
    parser.add_argument("--width", type=int, default=4096)
    parser.add_argument("--rows", type=int, nargs="*", default=[1, 8, 64, 512])
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--pads", type=float, nargs="*", default=list(PADS_US),
                        help="µs of idle spinning before each call, each pad a run (default 200)")
    parser.add_argument("--peers", nargs="*", default=["liger", "compile"])
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    flush = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    records = []
    for rows in args.rows:
        for name, call in calls_for(rows, args.width, args.peers, args.op).items():
            for pad_us in args.pads:
                row = trace(call, args.reps, flush, pad_us)
                records.append({"op": args.op, "rows": rows, "N": args.width, "call": name,
                                "pad_us": pad_us, **row})
                print(f"{rows:>5} x {args.width} {name:<18} pad {pad_us:5.0f}  launch "
                      f"{row['launch_us']:5.2f}  kernel {row['kernel_us']:5.2f}  events "
                      f"{row['events_us']:5.2f}  ({row['kernels']:.0f} kernel"
                      f"{'s' if row['kernels'] != 1 else ''})", flush=True)
    if args.out:
        results.write(Path(args.out), results.json_safe({"meta": describe(torch.device("cuda")),
                                                          "records": records}))


if __name__ == "__main__":
    main()
