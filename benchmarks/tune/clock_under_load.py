"""The SM clock and board power while one GEMM runs back to back, ours against cuBLAS: does
the power limit set the large-M ratio? Under ncu (one call, 2026-12-05) ours ran 4096 x 4096
x 14336 at 0.98x cuBLAS; the transformer-gemm suite's kernel timer, calling it again and
again, gave 0.89x. Ours issues 50% more instructions and reads 23% more from DRAM for the
same work, so a power-capped clock would fall further for ours.

    python benchmarks/tune/clock_under_load.py [--shapes 4096x4096x14336 ...] [--seconds 2]

Per shape and implementation: the mean µs a call over the run (CUDA events around the
whole run), and nvidia-smi's SM clock (MHz) and board power (W), sampled through the run.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import threading
from pathlib import Path

import torch
import torch.nn.functional as F

import torch_memopt
from torch_memopt.bench import results


def sample(stop: threading.Event, clocks: list, watts: list) -> None:
    # nvidia-smi rather than torch.cuda.clock_rate(): that needs pynvml, which the GPU
    # machine may lack; a query takes ~20-50 ms, so the thread samples as fast as it runs.
    query = ["nvidia-smi", f"--id={torch.cuda.current_device()}",
             "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits"]
    while not stop.is_set():
        mhz, watt = subprocess.run(query, capture_output=True, text=True).stdout.split(",")[:2]
        clocks.append(float(mhz))
        watts.append(float(watt))


def under_load(call, seconds: float) -> dict:
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    once = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    once[0].record()
    call()
    once[1].record()
    torch.cuda.synchronize()
    calls = max(10, int(seconds * 1e3 / once[0].elapsed_time(once[1])))
    clocks, watts, stop = [], [], threading.Event()
    sampler = threading.Thread(target=sample, args=(stop, clocks, watts))
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    sampler.start()
    start.record()
    for _ in range(calls):
        call()
    end.record()
    torch.cuda.synchronize()
    stop.set()
    sampler.join()
    return {"us": start.elapsed_time(end) * 1e3 / calls, "calls": calls,
            "sm_mhz": statistics.median(clocks), "watts": statistics.median(watts)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", nargs="*", metavar="MxNxK",
                        default=["4096x4096x14336", "4096x4096x4096", "512x22016x4096"])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    rows = []
    with torch.inference_mode():
        for shape in args.shapes:
            M, N, K = (int(v) for v in shape.lower().split("x"))
            x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
            w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16) * K ** -0.5
            for name, call in (("cublas", lambda: F.linear(x, w)),
                               ("ours", lambda: torch_memopt.linear(x, w))):
                row = {"shape": shape, "impl": name, **under_load(call, args.seconds)}
                rows.append(row)
                print(f"{shape:18s} {name:6s} {row['us']:8.1f} us  {row['sm_mhz']:5.0f} MHz  "
                      f"{row['watts']:4.0f} W", flush=True)
    if args.out:
        results.write(Path(args.out),
                      results.json_safe({"device": torch.cuda.get_device_name(), "rows": rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
