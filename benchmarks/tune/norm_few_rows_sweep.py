"""How many rows the norms' one-pack-a-thread launch pays for (issue 17). In small grids
16-byte-pack rows of up to 256 packs run one pack a thread over 128-256 threads
(norm_vectorized_launch.cuh; 64 rows when this sweep was written, 512 16-bit and 128 fp32
rows after it); past that, four packs a thread over 32-64.
At 512-4096 rows of 768-2048 columns ours trails torch.compile by 5-13% (H100 grid at
67cb712: bf16 add_rms_norm 4096 x 1024 0.87x, 512 x 1024 0.92x; fp32 rms_norm 4096 x 768
0.90x). This times both launches of the same build on the same inputs, switched by
``torch_memopt._C._set_norm_few_rows`` (no rebuild), beside Liger-Kernel where it is
importable (and torch.compile with --compile), and checks both against float64.
--params-any-grid adds both launches with the parameters loaded into registers with the
row at any grid (``_C._set_norm_param_stage(3)``; the rule does so for one wave of blocks
at most), for the grids past the bound where ours still trails torch.compile (H100 grid at
0a9a4b6: bf16 add_rms_norm 4096 x 768 / 1024 0.86 / 0.87x, fp32 rms_norm 4096 x 768 0.89x);
--params-late adds four packs a thread with the parameters read after the reductions.
--whole-rows: instead, fp32 rows of 4100 columns (1025 packs, a pack past 256 threads'
four) counted down to 256 threads that re-read the extra pack ("down", the rule at 16384
rows) against kept whole on 512 ("whole"), switched by ``_C._set_norm_whole_rows``: at
1 x 4100 fp32 add_layer_norm read 0.84 of 4096's GB/s (H100 grid at 0a9a4b6), under
issue 17's 0.85.
--ops softmax: softmax's same two launches of online's rows of 33-512 packs, switched by
``_C._set_softmax_few_rows`` (softmax_launch.cuh's launch_online_few_rows; at 1-512 rows
of 2048 ours trailed Liger-Kernel by 8-16%, H100 grid at 0a9a4b6), at the softmax grid's
widths that launch takes (1000 and 2048).

    python benchmarks/tune/norm_few_rows_sweep.py [--out sweep.json] [--compile]
        [--params-any-grid] [--params-late] [--rows 2048 4096] [--widths 768 1024]
        [--ops softmax] [--whole-rows]
"""
from __future__ import annotations

import argparse
import sys

import torch

from torch_memopt.bench import calls, tune_records
from torch_memopt.bench.timing import copy_gbps
from torch_memopt.testing.switches import EARLY_ANY_GRID, LATE

OPS = ("rms_norm", "layer_norm", "add_rms_norm", "add_layer_norm")
ROWS = (64, 128, 512, 2048, 4096, 16384)
# Up to 256 16-byte packs a row: the widths the one-pack launch can take.
WIDTHS = {torch.bfloat16: (768, 1024, 2048, 2050), torch.float32: (768, 1024)}
# Softmax's: 125 / 256 packs bf16, 250 / 512 fp32 (issue 17's grid; up to 512 packs).
SOFTMAX_WIDTHS = {torch.bfloat16: (1000, 2048), torch.float32: (1000, 2048)}
ALWAYS = 1 << 40
# name -> the switches (few_rows bound, parameter fetch)
LAUNCHES = {"four": {"few_rows": 0}, "one": {"few_rows": ALWAYS}}
PARAMS_ANY_GRID = {"four+regs": {"few_rows": 0, "param_stage": EARLY_ANY_GRID},
                   "one+regs": {"few_rows": ALWAYS, "param_stage": EARLY_ANY_GRID}}
# Rows a pack past a power of two of threads: counted down (the rule past the bound) or not.
WHOLE_ROWS = {"down": {"whole_rows": 0}, "whole": {"whole_rows": ALWAYS}}
WHOLE_ROWS_WIDTHS = {torch.float32: (4100,)}
# Read after the reductions: past one wave what the rule did before rms_norm held its
# weight in registers at any grid.
PARAMS_LATE = {"four+late": {"few_rows": 0, "param_stage": LATE}}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None)
    parser.add_argument("--compile", action="store_true", help="torch.compile as a peer too")
    parser.add_argument("--ops", nargs="*", default=list(OPS),
                        help="norm ops (default: all four), or softmax")
    parser.add_argument("--rows", nargs="*", type=int, default=list(ROWS))
    parser.add_argument("--widths", nargs="*", type=int, default=None,
                        help="columns (default: 768-2050 bf16, 768-1024 fp32)")
    parser.add_argument("--params-any-grid", action="store_true",
                        help="also both launches with the parameters in registers at any grid")
    parser.add_argument("--params-late", action="store_true",
                        help="also four packs a thread with the parameters read late")
    parser.add_argument("--whole-rows", action="store_true",
                        help="fp32 x 4100: the extra pack re-read (down) or kept (whole)")
    args = parser.parse_args(argv)
    if "softmax" in args.ops and (args.params_any_grid or args.params_late):
        parser.error("--params-any-grid / --params-late switch the norms' parameters: "
                     "not with --ops softmax")
    launches = {**LAUNCHES, **(PARAMS_ANY_GRID if args.params_any_grid else {}),
                **(PARAMS_LATE if args.params_late else {})}
    if args.whole_rows:
        if "softmax" in args.ops:
            parser.error("--whole-rows switches the norms' launch: not with --ops softmax")
        launches = WHOLE_ROWS
    first, second = list(launches)[:2]

    def widths_of(op):
        if args.whole_rows:
            return WHOLE_ROWS_WIDTHS
        return SOFTMAX_WIDTHS if op == "softmax" else WIDTHS

    peer_names = ("liger", "compile") if args.compile else ("liger",)
    copy = copy_gbps(torch.device("cuda"))
    print(f"copy {copy:.0f} GB/s; us, {first} and {second}, forced")
    records, bad = [], 0
    for dtype in WHOLE_ROWS_WIDTHS if args.whole_rows else WIDTHS:
        for op in args.ops:
            for n in args.widths or widths_of(op)[dtype]:
                for rows in args.rows:
                    rec = tune_records.switched_record(op, dtype, rows, n, launches, peer_names)
                    bad += tune_records.past_tolerance(rec, calls.tolerance(op, dtype))
                    records.append(rec)
                    us = rec["us"]
                    rest = " ".join(f"{k} {v:6.2f}" for k, v in us.items()
                                    if k not in (first, second))
                    print(f"{op:<15}{rec['dtype']:<9}{f'{rows}x{n}':<11} {first} {us[first]:6.2f}"
                          f" {second} {us[second]:6.2f} x{us[first] / us[second]:.2f}  {rest}",
                          flush=True)
    tune_records.write(args.out, records, copy_gbps=copy)
    return tune_records.finish(bad)


if __name__ == "__main__":
    sys.exit(main())
