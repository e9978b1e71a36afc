"""The host's time to enqueue one call, ours against the stock op, at BERT-base's prefill
shapes (8 x 512 tokens, hidden 768, bf16): what a call costs the CPU before any kernel
runs. BERT's prefill on the H200 is host-bound (4286 µs of kernels in a 5450 µs call,
2026-12-05), so a microsecond of host time a call is worth as much there as a microsecond
of kernel time.

    python benchmarks/tune/host_cost.py [--out host_cost.json]

Each call is enqueued behind a sleep kernel long enough that no launch waits on the GPU;
the time to return is Python, the dispatcher, our checks and plan, and the launches.
Median of 200 calls, µs.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from torch_memopt import ops
from torch_memopt.bench import results

REPS = 200


def enqueue_us(call, sleep_cycles: int) -> float:
    """One sample: µs to enqueue ``call`` behind a sleep kernel of ``sleep_cycles`` (the
    default ~1 ms at 1.98 GHz, far longer than one op's enqueue; a whole model needs more),
    so that no launch waits on the GPU."""
    torch.cuda._sleep(sleep_cycles)
    start = time.perf_counter()
    call()
    elapsed = (time.perf_counter() - start) * 1e6
    torch.cuda.synchronize()
    return elapsed


def warm_up(*calls) -> None:
    """Three calls of each, then the GPU idle: allocations cached, kernels loaded."""
    for call in calls:
        for _ in range(3):
            call()
    torch.cuda.synchronize()


def host_us(call, reps: int = REPS, sleep_cycles: int = 2_000_000) -> float:
    """Median µs to enqueue ``call`` (enqueue_us), after warm_up."""
    warm_up(call)
    return statistics.median(enqueue_us(call, sleep_cycles) for _ in range(reps))


def host_us_pair(stock, ours, reps: int = REPS, sleep_cycles: int = 2_000_000):
    """Median µs to enqueue ``stock`` and ``ours`` (enqueue_us), sampled alternately, the
    order swapped every second sample, so that a drift of the host's clock over the run
    lands on both sides. The first run (9dcdfb1) timed all of stock's samples, then all
    of ours: ours read 20-28 µs more for the norms and softmax, where nothing on their
    path costs a tenth of that on the CPU."""
    warm_up(stock, ours)
    samples = ([], [])
    for rep in range(2 * reps):
        side = (rep + rep // 2) % 2  # 0 1 1 0 0 1 1 0 ...: each side first half the time
        samples[side].append(enqueue_us((stock, ours)[side], sleep_cycles))
    return statistics.median(samples[0]), statistics.median(samples[1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    dev, dt = "cuda", torch.bfloat16
    x = torch.randn(4096, 768, device=dev, dtype=dt)
    r = torch.randn_like(x)
    w = torch.randn(768, 768, device=dev, dtype=dt)
    w_up = torch.randn(3072, 768, device=dev, dtype=dt)
    b, b_up = torch.randn(768, device=dev, dtype=dt), torch.randn(3072, device=dev, dtype=dt)
    g, beta = torch.randn(768, device=dev, dtype=dt), torch.randn(768, device=dev, dtype=dt)
    pairs = {
        "linear 768": (lambda: F.linear(x, w, b), lambda: ops.linear(x, w, b)),
        "linear 768, op directly": (lambda: F.linear(x, w, b),
                                    lambda: torch.ops.memopt.linear(x, w, b)),
        "linear + gelu 3072": (lambda: F.gelu(F.linear(x, w_up, b_up)),
                               lambda: ops.linear(x, w_up, b_up, activation="gelu")),
        "layer_norm": (lambda: F.layer_norm(x, (768,), g, beta),
                       lambda: ops.layer_norm(x, (768,), g, beta)),
        # Where a norm call's host time goes: the op without the wrapper's keyword, the
        # simplest rung (no parameter staging, no occupancy cache), no parameters.
        "layer_norm, op directly": (lambda: F.layer_norm(x, (768,), g, beta),
                                    lambda: torch.ops.memopt.layer_norm(x, [768], g, beta, 1e-5)),
        "layer_norm, warp_per_row": (lambda: F.layer_norm(x, (768,), g, beta),
                                     lambda: ops.layer_norm(x, (768,), g, beta,
                                                            variant="warp_per_row")),
        "layer_norm, no parameters": (lambda: F.layer_norm(x, (768,)),
                                      lambda: ops.layer_norm(x, (768,))),
        "rms_norm": (lambda: F.rms_norm(x, (768,), g, 1e-6),
                     lambda: ops.rms_norm(x, (768,), g, 1e-6)),
        "add + layer_norm": (lambda: F.layer_norm(x + r, (768,), g, beta),
                             lambda: ops.add_layer_norm(x, r, (768,), g, beta)),
        "softmax": (lambda: torch.softmax(x, -1), lambda: ops.softmax(x, -1)),
        "empty kernel": (lambda: torch.cuda._sleep(0), lambda: torch.cuda._sleep(0)),
        "empty_like (no kernel)": (lambda: torch.empty_like(x), lambda: torch.empty_like(x)),
    }
    result = {"meta": {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "commit": os.environ.get("MEMOPT_GIT_COMMIT", "unknown")},
              "us": {}}
    print(f"{'call':26s} {'stock':>7s} {'ours':>7s}")
    with torch.inference_mode():
        for name, (stock, ours) in pairs.items():
            stock_us, ours_us = host_us_pair(stock, ours)
            row = {"stock": stock_us, "ours": ours_us}
            result["us"][name] = row
            print(f"{name:26s} {row['stock']:7.2f} {row['ours']:7.2f}", flush=True)
    if args.out:
        results.write(Path(args.out), results.json_safe(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
