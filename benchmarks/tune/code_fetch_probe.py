"""What a short kernel's code costs when it is not on chip (issue 17's decode rows; probe 9,
csrc/probe/instruction_fetch.cu). One block runs straight code of 1-64 KB, or 4 KB executed
in 4 or 16 pieces over a 68 KB span (forward jumps over code not taken), timed by the
harness's kernel timer three ways:

- ``warm``: no flush, the code where the last call left it (L2 and the SMs' caches);
- ``L2 flushed``: the benchmarks' protocol (a 256 MiB zero before each call), which evicts
  code from L2 as well as data;
- ``evicted``: the flush, then 128 KB of other code run on every SM, so that the code is
  in neither L2 nor an SM's instruction caches.

Each shape's excess over its warm time is the cost of fetching its code; against the same
for torch.cuda._sleep(0) (an empty kernel), per KB and per jump. Our norm kernel for one
row of 4096 bf16 is 18-38 KB with 3-5 forward jumps on its path; Triton's is 3.8 KB, straight.

    python benchmarks/tune/code_fetch_probe.py [--out code_fetch.json]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import torch

import torch_memopt  # noqa: F401  (loads the probe ops)
from torch_memopt.bench import results
from torch_memopt.bench.environment import describe
from torch_memopt.bench.timing import KernelTimer

PROBE = torch.ops.memopt_probe
SASS_BYTES = 16  # one instruction (sm_90a)


def shapes() -> list[dict]:
    out = []
    for i, (segments, run, gap) in enumerate(PROBE.code_fetch_shapes().tolist()):
        out.append({"shape": i, "segments": segments, "run": run, "gap": gap,
                    "executed_kb": segments * run * SASS_BYTES / 1024,
                    "span_kb": segments * (run + gap) * SASS_BYTES / 1024,
                    "jumps": segments if gap else 0})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None)
    parser.add_argument("--rep-ms", type=float, default=50.0)
    args = parser.parse_args()
    device = torch.device("cuda")
    out = torch.empty(128, device=device)
    sink = torch.empty(4 * torch.cuda.get_device_properties(device).multi_processor_count * 128,
                       device=device)
    timers = {
        "warm": KernelTimer(device, args.rep_ms, flush="none"),
        "L2 flushed": KernelTimer(device, args.rep_ms),
        "evicted": KernelTimer(device, args.rep_ms, before=lambda: PROBE.code_fetch_evict(sink)),
    }
    calls = {"empty kernel": ({"shape": None, "executed_kb": 0.0, "span_kb": 0.0, "jumps": 0},
                              lambda: torch.cuda._sleep(0))}
    for s in shapes():
        calls[f"{s['executed_kb']:g} KB run in {s['segments']}, span {s['span_kb']:g} KB"] = (
            s, lambda i=s["shape"]: PROBE.code_fetch(i, out))
    records = []
    for name, (shape, call) in calls.items():
        us = {how: timer.time(call).median_us for how, timer in timers.items()}
        records.append({"name": name, **shape, "us": us})
        print(f"{name:>34}: " + "  ".join(f"{k} {v:6.2f}" for k, v in us.items())
              + f"  | flushed - warm {us['L2 flushed'] - us['warm']:5.2f}"
              + f"  evicted - warm {us['evicted'] - us['warm']:5.2f}", flush=True)
    if args.out:
        results.write(Path(args.out), results.json_safe({"meta": describe(device),
                                                          "records": records}))


if __name__ == "__main__":
    main()
