"""Does the L2 flush itself cost the timed call? do_bench's flush zeroes 256 MiB, which
leaves the 60 MB L2 full of dirty lines; the next kernel's reads evict them, and their
write-back to HBM competes with the kernel's own reads. This times F.linear (cuBLAS) and
memopt.linear (auto) at the Llama-3-8B o-, down- and gate_up-projections, M = 1-8192,
bfloat16, under both flushes of KernelTimer: "write" (zero_, do_bench's) and "read" (a
sum over the buffer: as cold an L2, but clean), in the same process.

    python benchmarks/tune/flush_protocol.py [--out flush_protocol.json]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

import torch_memopt
from torch_memopt.bench import results
from torch_memopt.bench.environment import describe
from torch_memopt.bench.timing import kernel_ms

LAYERS = (("o", 4096, 4096), ("down", 4096, 14336), ("gate_up", 28672, 4096))
TOKENS = (1, 16, 64, 128, 256, 512, 1024, 2048, 8192)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    records = []
    print(f"{'layer':8s} {'M':>5s}  {'cuBLAS w':>9s} {'ours w':>8s} {'x w':>5s}   "
          f"{'cuBLAS r':>9s} {'ours r':>8s} {'x r':>5s}")
    for layer, N, K in LAYERS:
        w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16) * K ** -0.5
        for M in TOKENS:
            x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
            row = {"layer": layer, "M": M, "N": N, "K": K}
            for flush in ("write", "read"):
                row[f"cublas_{flush}_us"] = kernel_ms(lambda: F.linear(x, w), flush=flush) * 1e3
                row[f"ours_{flush}_us"] = kernel_ms(lambda: torch_memopt.linear(x, w), flush=flush) * 1e3
            records.append(row)
            print(f"{layer:8s} {M:5d}  {row['cublas_write_us']:9.1f} {row['ours_write_us']:8.1f} "
                  f"{row['cublas_write_us'] / row['ours_write_us']:5.2f}   {row['cublas_read_us']:9.1f} "
                  f"{row['ours_read_us']:8.1f} {row['cublas_read_us'] / row['ours_read_us']:5.2f}",
                  flush=True)
    if args.out:
        results.write(Path(args.out), results.json_safe({"meta": describe(torch.device("cuda")),
                                                          "records": records}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
