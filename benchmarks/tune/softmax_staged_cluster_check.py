"""softmax's staged rung over clusters (kernels/v06_staged.cuh, kCluster > 1) against what
auto runs today (online, which re-reads a row past its registers, or cluster, which holds a
row's slices in registers with nothing in flight while it reduces) at the vocabulary rows
of issue 17's grid, Liger-Kernel where it serves the width, and the copy ceiling; same
process, same inputs, the kernel timer with the L2 flushed. Each cluster size that fits the
width is timed through ``torch_memopt._C._set_softmax_staged_cluster``; auto's rule in
softmax_cuda.cu is read off this table.

    python benchmarks/tune/softmax_staged_cluster_check.py [--out staged_cluster.json] [--quick]
"""
from __future__ import annotations

import argparse
import sys

import torch

import torch_memopt
from torch_memopt.bench import calls, peers, tune_records
from torch_memopt.bench.timing import copy_gbps, kernel_ms

# (dtype, width, row counts): 16-bit rows one block's buffers fit (32000: a ring of 3;
# 50257: 2) and rows only two CTAs' fit (bf16 100000, fp32 32000-50257), beside auto.
# Clusters of 4 and 8 (128256 / 256000 bf16, fp32 128256) were measured with this
# script and dropped (docs/perf-notes.md, 2026-12-06 evening).
CASES = [(torch.bfloat16, 32000, (512, 2048)), (torch.bfloat16, 50257, (512, 2048)),
         (torch.bfloat16, 100000, (64, 512, 2048)), (torch.float32, 32000, (512, 2048)),
         (torch.float32, 32001, (512, 2048)), (torch.float32, 50257, (64, 132, 512, 2048))]
QUICK = [(torch.bfloat16, 100000, (512,)), (torch.float32, 50257, (512,))]
CLUSTERS = (1, 2)


def staged_cluster(x) -> int:
    """The CTAs a row the staged kernel runs with under the current override (0: none)."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        torch_memopt.softmax(x, -1, variant="staged")
        torch.cuda.synchronize()
    for event in prof.key_averages():
        key = event.key
        if "softmax_staged_kernel<" in key:
            return int(key.split("softmax_staged_kernel<", 1)[1].split(">", 1)[0].split(",")[2])
    return 0


def liger_us(inputs):
    if not peers.serves("liger", "softmax", torch.device("cuda")):
        return None
    try:
        call = peers.build("liger", "softmax", {}, torch.device("cuda"))
        call(*inputs)
    except Exception:  # peers.Unavailable, or Liger refusing rows past 65536
        return None
    return kernel_ms(lambda: call(*inputs)) * 1e3


def measure(dtype, rows, n):
    shape = calls.rows_shape(rows, n)
    inputs = calls.make_inputs("softmax", shape, dtype, "cuda", {})
    ref = calls.reference("softmax", inputs, {})
    record = {"dtype": calls.dtype_name(dtype), "rows": rows, "N": n, "us": {}, "rel_err": {},
              "clusters_run": {}}
    timed = {"auto": calls.ours("softmax", "auto", {})}
    staged = calls.ours("softmax", "staged", {})
    for name, call in timed.items():
        record["rel_err"][name] = calls.relative_error(call(*inputs), ref)
        record["us"][name] = kernel_ms(lambda: call(*inputs)) * 1e3
    for cluster in CLUSTERS:
        previous = torch_memopt._C._set_softmax_staged_cluster(cluster)
        try:
            ran = staged_cluster(inputs[0])
            if ran != cluster:  # does not fit: the rule's size ran instead
                continue
            name = f"staged{cluster}"
            record["clusters_run"][name] = ran
            record["rel_err"][name] = calls.relative_error(staged(*inputs), ref)
            record["us"][name] = kernel_ms(lambda: staged(*inputs)) * 1e3
        finally:
            torch_memopt._C._set_softmax_staged_cluster(previous)
    liger = liger_us(inputs)
    if liger is not None:
        record["us"]["liger"] = liger
    _, nbytes = calls.work("softmax", shape, dtype, {})
    record["gbps"] = tune_records.gbps(record["us"], nbytes)
    return record


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None)
    parser.add_argument("--quick", action="store_true", help="two cases")
    args = parser.parse_args(argv)
    copy = copy_gbps(torch.device("cuda"))
    records, bad = [], 0
    print(f"copy {copy:.0f} GB/s; % of copy, then staged's best ÷ auto (time)")
    names = ["auto"] + [f"staged{c}" for c in CLUSTERS] + ["liger"]
    print(f"{'dtype':<9}{'shape':<14}" + "".join(f"{n:>9}" for n in names) + "   best/auto")
    for dtype, n, row_counts in (QUICK if args.quick else CASES):
        for rows in row_counts:
            rec = measure(dtype, rows, n)
            rec["copy_gbps"] = copy
            bad += tune_records.past_tolerance(rec, calls.tolerance("softmax", dtype))
            records.append(rec)
            pct = {k: 100 * g / copy for k, g in rec["gbps"].items()}
            staged_best = min((us for k, us in rec["us"].items() if k.startswith("staged")),
                              default=None)
            gain = f"x{rec['us']['auto'] / staged_best:.2f}" if staged_best else "-"
            print(f"{rec['dtype']:<9}{f'{rows}x{n}':<14}"
                  + "".join(f"{pct[k]:8.0f}%" if k in pct else "        -" for k in names)
                  + f"   {gain}", flush=True)
    tune_records.write(args.out, records, copy_gbps=copy)
    return tune_records.finish(bad)


if __name__ == "__main__":
    sys.exit(main())
