"""Where a norm call's host time goes, ours against stock: torch.profiler's CPU events (the
dispatcher's ops inside ours, cudaLaunchKernel and the other runtime calls) over many calls at
BERT-base's rows (4096 x 768, bf16). On the H100 host of 2026-12-05 our layer_norm took 15-19 µs
more to enqueue than F.layer_norm whatever the rung, and our fused add + layer_norm, through the
same row preparation and launcher, less than stock's two ops (host_cost.py); nothing on the path
costs that on the CPU build. The table says which child op or runtime call holds the difference.

    python benchmarks/tune/host_profile_norm.py [--calls 500] [--out host_profile_norm.json]
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

from torch_memopt import ops
from torch_memopt.bench import results


def events_us(call, calls: int) -> dict:
    """Self CPU µs a call of every event name under the profiler, and the call count of
    each a call."""
    for _ in range(10):
        call()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            call()
        torch.cuda.synchronize()
    table = {}
    for e in prof.key_averages():
        if e.device_type.name != "CPU":
            continue
        table[e.key] = {"self_us": e.self_cpu_time_total / calls, "count": e.count / calls}
    return table


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    x = torch.randn(4096, 768, device="cuda", dtype=torch.bfloat16)
    r = torch.randn_like(x)
    g, b = torch.randn(768, device="cuda", dtype=x.dtype), torch.randn(768, device="cuda", dtype=x.dtype)
    calls = {
        "stock layer_norm": lambda: F.layer_norm(x, (768,), g, b),
        "ours layer_norm": lambda: ops.layer_norm(x, (768,), g, b),
        "stock add + layer_norm": lambda: F.layer_norm(x + r, (768,), g, b),
        "ours add_layer_norm": lambda: ops.add_layer_norm(x, r, (768,), g, b),
        "stock softmax": lambda: torch.softmax(x, -1),
        "ours softmax": lambda: ops.softmax(x, -1),
    }
    result = {"meta": {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "git": os.environ.get("MEMOPT_GIT_COMMIT", "unknown")}, "calls": {}}
    with torch.inference_mode():
        for name, call in calls.items():
            table = events_us(call, args.calls)
            result["calls"][name] = table
            total = sum(v["self_us"] for v in table.values())
            top = sorted(table.items(), key=lambda kv: -kv[1]["self_us"])[:6]
            print(f"== {name}: {total:.1f} µs of profiled CPU time a call; "
                  + ", ".join(f"{k} {v['self_us']:.1f}" for k, v in top), flush=True)
    if args.out:
        results.write(Path(args.out), results.json_safe(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
