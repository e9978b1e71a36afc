"""The norms at widths off the 16-byte pack, peeled (16-byte packs, a single-element
head and tail a row) against the narrower packs that fit every row, beside their aligned
neighbour (2050 by 2048, 4100 by 4096), Liger-Kernel where it is importable, and the copy
ceiling, same process, same inputs (issue 17: "each choice is measured, and the chooser
keeps the faster"). The switch is ``torch_memopt._C._set_norm_peel`` (2 forces the peel,
0 the narrow packs; auto's rule in norm_narrow_packs.cu is read off this script's table).

    python benchmarks/tune/norm_peel_check.py [--out norm_peel.json] [--quick | --few-rows]
"""
from __future__ import annotations

import argparse
import sys

import torch

from torch_memopt.bench import calls, tune_records
from torch_memopt.bench.timing import copy_gbps
from torch_memopt.testing.switches import NARROW_PACKS, PEELED

OPS = ("rms_norm", "layer_norm", "add_rms_norm", "add_layer_norm")
# (rows, off-pack width, its aligned neighbour)
SHAPES = [(16384, 4100, 4096), (4096, 4100, 4096), (16384, 2050, 2048), (512, 2050, 2048),
          (4096, 6150, 6144), (16384, 1025, 1024)]
QUICK = [(16384, 4100, 4096), (16384, 2050, 2048)]
# Decode rows: the rule above was read off 512-16384 rows; at 1 row the fused adds at 4100 /
# 2050 (8-byte packs) ran 0.83-0.85 of their aligned neighbour's GB/s (H100 grid, 0a9a4b6).
FEW_ROWS = [(rows, n, aligned) for rows in (1, 8, 64) for n, aligned in ((4100, 4096), (2050, 2048))]


# The two kernels of a row off the 16-byte pack, forced.
LAUNCHES = {"peeled": {"peel": PEELED}, "narrow": {"peel": NARROW_PACKS}}


def measure(op, dtype, rows, n):
    """Times (us) and errors of one off-pack case; GB/s from calls.work's bytes."""
    return tune_records.switched_record(op, dtype, rows, n, LAUNCHES)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None)
    parser.add_argument("--quick", action="store_true", help="two shapes, bf16 only")
    parser.add_argument("--few-rows", action="store_true", help="1-64 rows x 4100 / 2050")
    args = parser.parse_args(argv)
    copy = copy_gbps(torch.device("cuda"))
    records, bad = [], 0
    shapes = QUICK if args.quick else FEW_ROWS if args.few_rows else SHAPES
    dtypes = (torch.bfloat16,) if args.quick else (torch.bfloat16, torch.float32)
    print(f"copy {copy:.0f} GB/s")
    print(f"{'op':<15}{'dtype':<9}{'shape':<12}{'peeled':>8}{'narrow':>8}{'aligned':>8}"
          f"{'liger':>8}  GB/s; peeled/narrow, peeled/liger")
    for dtype in dtypes:
        for op in OPS:
            for rows, n, aligned in shapes:
                rec = measure(op, dtype, rows, n)
                neighbour = measure(op, dtype, rows, aligned)
                rec["aligned_gbps"] = neighbour["gbps"]["peeled"]
                rec["copy_gbps"] = copy
                bad += tune_records.past_tolerance(rec, calls.tolerance(op, dtype))
                records.append(rec)
                g = rec["gbps"]
                liger = g.get("liger")
                ratio = f"{rec['us']['liger'] / rec['us']['peeled']:.2f}" if liger else "-"
                print(f"{op:<15}{rec['dtype']:<9}{f'{rows}x{n}':<12}{g['peeled']:8.0f}"
                      f"{g['narrow']:8.0f}{rec['aligned_gbps']:8.0f}"
                      f"{(f'{liger:8.0f}' if liger else '       -')}  "
                      f"x{rec['us']['narrow'] / rec['us']['peeled']:.2f}, x{ratio}", flush=True)
    tune_records.write(args.out, records)
    return tune_records.finish(bad)


if __name__ == "__main__":
    sys.exit(main())
