"""What a GEMM call costs before it does any work, under each timing protocol: the
floor that every figure of the transformer-gemm suite stands on.

    python benchmarks/tune/floor_probe.py [--out floor.json]

For each case, the median time of cuBLAS (`F.linear`) and of ours (auto, and the
wgmma_split rung at 1 and 4 splits) under three protocols: the suites' flush (zeroing
256 MB first, as do_bench does: a dirty L2), a flush by a read (a clean cold L2), and
none (20 calls back to back between two events, divided by 20: warm L2, launch costs
overlapped). Beside them, two floors of the same protocols: a one-element kernel
(`add_` on one float) and a read of the weight alone (`w.sum()`), so that "cuBLAS
takes 18 us at M = 128" can be read against "reading the 32 MB weight takes F us".

Cases: Llama o-proj (N = K = 4096) at M = 1, 128, 256, 512, and the same layer cut to
one k-tile (K = 64): a call that moves 1.6 MB and does 67 MFLOP.
"""
from __future__ import annotations

import argparse
import json
import statistics

import torch
import torch.nn.functional as F

from torch_memopt import _C
from torch_memopt.bench.timing import kernel_ms
from sweep_wgmma_split import call_of  # this folder: a linear call under a split override

CASES = ((1, 4096, 4096), (128, 4096, 4096), (256, 4096, 4096), (512, 4096, 4096),
         (128, 4096, 64))
BACK_TO_BACK = 20


def back_to_back_us(call) -> float:
    """Median over 15 trials of 20 calls between two events, per call: no flush."""
    for _ in range(3):
        call()
    samples = []
    for _ in range(15):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(BACK_TO_BACK):
            call()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1e3 / BACK_TO_BACK)
    return statistics.median(samples)


def protocols(call) -> dict:
    return {"write": kernel_ms(call, flush="write") * 1e3,
            "read": kernel_ms(call, flush="read") * 1e3,
            "none": back_to_back_us(call)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    one = torch.zeros(1, device="cuda")
    records = [{"case": "one-element add_", "us": protocols(lambda: one.add_(1.0))}]
    for M, N, K in CASES:
        x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16) * K ** -0.5
        ref = F.linear(x.double(), w.double())
        calls = {"cuBLAS": lambda: F.linear(x, w), "w.sum()": lambda: w.sum(),
                 "ours auto": call_of(x, w, "auto", 0)}
        if M > 64:
            calls["wgmma_split x1"] = call_of(x, w, "wgmma_split", 1)
            calls["wgmma_split x4"] = call_of(x, w, "wgmma_split", 4)
        for name, call in calls.items():
            if name.startswith("ours") or name.startswith("wgmma"):
                err = float((call().double() - ref).abs().max() / ref.abs().max())
                if err > 1e-2:
                    raise SystemExit(f"{name} at {M}x{N}x{K}: relative error {err:.2e}")
            records.append({"case": f"{name} {M}x{N}x{K}", "M": M, "N": N, "K": K,
                            "us": protocols(call)})
        _C._set_wgmma_splits(0)
    print(f"{'case':38s} {'flush write':>12s} {'flush read':>11s} {'no flush':>9s}  (us)")
    for r in records:
        us = r["us"]
        print(f"{r['case']:38s} {us['write']:12.1f} {us['read']:11.1f} {us['none']:9.1f}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "records": records}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
