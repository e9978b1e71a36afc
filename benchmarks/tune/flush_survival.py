"""Does a line loaded with an L2 ``evict_last`` hint outlive the kernel timer's flush, and
does that explain torch.compile's lead over ours at short norm rows (issue 17)?

Inductor gives a load whose index is the same for every row (a norm's weight) and the
first of two loads of one buffer ``eviction_policy='evict_last'``. The timer's flush
zeroes 256 MiB with ordinary stores; an evict_last line is replaced only when its set
holds no line of normal priority, so it might still be in the L2 at the next call, and
a kernel reading it would find it there where ours goes to HBM. Two measurements:

1. **Survival**, no peers: a buffer of ``--survival-mb`` read by a Triton kernel with
   ``evict_last`` (or with no hint), then the timer's flush, then the same buffer read
   again with no hint, timed. If the hinted lines survive, the second read is faster
   after the hinted first read than after the plain one.
   The same after the timer's deep flush (``flush="deep"``: the plain zeros, then the
   same buffer zeroed again with an evict_last policy, csrc/probe/l2_flush.cu): both
   reads should then take the same time.
2. **The norms under the deep flush**: ours, Liger's and compile's rms_norm / layer_norm
   (bf16) under the timer's flush and under its deep flush. If compile's lead is its
   kept lines, it shrinks under the deep flush; ours, which sets no hint, should not
   move.

    python benchmarks/tune/flush_survival.py [--rows 1 64 512 4096] [--width 4096]
        [--out flush_survival.json]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

import torch_memopt
from torch_memopt.bench import results
from torch_memopt.bench.environment import describe
from torch_memopt.bench.timing import KernelTimer

from norm_latency_probe import calls_for

BLOCK = 4096  # int32 elements a program: 16 KB


@triton.jit
def _read_kernel(src, sink, n, BLOCK: tl.constexpr, EVICT_LAST: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVICT_LAST:
        v = tl.load(src + offsets, mask=offsets < n, other=0, eviction_policy="evict_last")
    else:
        v = tl.load(src + offsets, mask=offsets < n, other=0)
    # One store a program keeps the loads live; never true for the buffers here.
    total = tl.sum(v, axis=0)
    if total == -123456789:
        tl.store(sink + tl.program_id(0), total)


def read(buffer: torch.Tensor, sink: torch.Tensor, evict_last: bool) -> None:
    n = buffer.numel()
    _read_kernel[(triton.cdiv(n, BLOCK),)](buffer, sink, n, BLOCK=BLOCK, EVICT_LAST=evict_last)


def survival(megabytes: int) -> dict:
    """µs to read ``megabytes`` after the timer's flush (write or deep), the buffer's lines
    last loaded with evict_last or with no hint before that flush."""
    buffer = torch.randint(0, 7, (megabytes * 2**20 // 4,), dtype=torch.int32, device="cuda")
    sink = torch.zeros(triton.cdiv(buffer.numel(), BLOCK), dtype=torch.int32, device="cuda")
    out = {}
    for kind in ("write", "deep"):
        for hint in (False, True):
            # A sample: the timer's flush, then `before` (the read with or without the
            # hint, and the timer's flush again), then the timed plain read.
            timer = KernelTimer(torch.device("cuda"), flush=kind)
            again = timer.empty_l2()
            timer.before = lambda hint=hint, again=again: (read(buffer, sink, hint), again())
            name = f"{kind}: " + ("evict_last first" if hint else "plain first")
            out[name] = timer.time(lambda: read(buffer, sink, False)).median_us
    timer = KernelTimer(torch.device("cuda"), flush="none")
    out["no flush (warm)"] = timer.time(lambda: read(buffer, sink, False)).median_us
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="*", default=[1, 64, 512, 4096])
    parser.add_argument("--width", type=int, default=4096)
    parser.add_argument("--ops", nargs="*", default=["rms_norm", "layer_norm"])
    parser.add_argument("--survival-mb", type=int, nargs="*", default=[8, 32])
    parser.add_argument("--out", default=None)
    args = parser.parse_args()

    record = {"meta": describe(torch.device("cuda")), "survival_us": {}, "norms": []}
    for mb in args.survival_mb:
        us = survival(mb)
        record["survival_us"][f"{mb} MB"] = us
        print(f"survival {mb:>3} MB read after the flush: " +
              "  ".join(f"{k} {v:.2f} us" for k, v in us.items()), flush=True)

    timers = {"write": KernelTimer(torch.device("cuda")),
              "deep": KernelTimer(torch.device("cuda"), flush="deep")}
    for op in args.ops:
        for rows in args.rows:
            calls = calls_for(rows, args.width, ("liger", "compile"), op)
            keep = ["empty kernel", "x.neg()", "ours", "liger", "compile"]
            for flush, timer in timers.items():
                us = {name: timer.time(calls[name]).median_us for name in keep if name in calls}
                peers = [us[p] for p in ("liger", "compile") if p in us]
                ratio = min(peers) / us["ours"] if peers else float("nan")
                record["norms"].append({"op": op, "rows": rows, "N": args.width,
                                        "flush": flush, "us": us, "ours_vs_best_peer": ratio})
                print(f"{op:10s} {rows:>5} x {args.width} {flush:5s}: " +
                      "  ".join(f"{k} {v:.2f}" for k, v in us.items()) +
                      f"  | best peer / ours {ratio:.2f}", flush=True)
    # 3. A GEMM re-reads its tiles through the L2; neither cuBLAS nor ours sets a hint,
    # so the deep flush should leave both where the plain one does.
    record["gemm"] = []
    for M, N, K in ((512, 4096, 4096), (4096, 4096, 4096)):
        x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
        gemms = {"cublas": lambda: F.linear(x, w), "ours": lambda: torch_memopt.linear(x, w)}
        for flush, timer in timers.items():
            us = {name: timer.time(call).median_us for name, call in gemms.items()}
            record["gemm"].append({"M": M, "N": N, "K": K, "flush": flush, "us": us})
            print(f"linear {M} x {N} x {K} {flush:5s}: " +
                  "  ".join(f"{k} {v:.2f}" for k, v in us.items()), flush=True)
    if args.out:
        results.write(Path(args.out), results.json_safe(record))


if __name__ == "__main__":
    main()
