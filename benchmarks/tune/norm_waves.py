"""How many waves the late 16-byte norm kernels' grids take, read from the build's registers
(no GPU needed: the sm_90a cubin in torch_memopt._C, through sass_audit). A grid just past a
whole number of waves leaves most SMs idle for its last part: at 80 registers the fused
add + RMSNorm ran 4096 rows of 1024 bf16 in 1.29 waves, and those grids were its worst cases
against torch.compile (H100, 2026-12-05: 0.87-0.91x).

For each op, dtype and width of the norm grid: the threads a row (the launcher's row_threads,
mirrored here from csrc/norm/norm_vectorized_launch.cuh), the late instance's registers,
blocks an SM by the register file (allocated 8 a thread at a time), rows a wave on 132 SMs,
and the waves at each row count. Between 1 and 8 waves, a fraction within 0.05-0.5 of the
whole number below it is marked with `*` (past 8 waves such a tail is under 6% of the time).
Grids of one wave or less of the early instance take that instance, which this does not
model.

    python benchmarks/tune/norm_waves.py [--dtype bf16] [--sms 132] [--rows 512 4096 16384]
"""
from __future__ import annotations

import argparse
import math
import tempfile

from torch_memopt.testing import sass_audit

WIDTHS = (768, 1024, 2048, 3072, 4096, 6144, 8192)
MANGLED = {"bf16": "N3c108BFloat16ES2_", "fp16": "N3c104HalfES2_", "fp32": "ff"}
ELEMENT_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4}
OPS = {"rms_norm": (True, False), "layer_norm": (False, False),
       "add_rms_norm": (True, True), "add_layer_norm": (False, True)}
ROW_VECS = 4           # kRowVecs: 16-byte packs a thread keeps
MIN_BLOCK = 128        # kNormVecMinBlock
REGISTER_FILE = 65536  # 32-bit registers an SM
MAX_THREADS_PER_SM = 2048


def row_threads(packs: int, vecs: int = ROW_VECS) -> int:
    """The launcher's threads a row: enough for `vecs` packs each, counted down to the power
    of two below when the row is at most an eighth of its threads past it."""
    needed = -(-packs // vecs)
    below = 32
    while below * 2 < needed:
        below *= 2
    return below if needed > below and packs - below * vecs <= below // 8 else needed


def instance_threads(width: int, element_bytes: int, add: bool) -> int:
    threads = row_threads(width * element_bytes // 16)
    for size in (32, 64, 128, 256, 512):
        if threads <= size:
            return size
    return 512 if add else 1024


def late_registers(usage: dict, dtype: str, rms: bool, threads: int, add: bool):
    """Registers of norm_vectorized_kernel<T, T, rms, threads, add, 1, 4, 16, false, false>."""
    prefix = "_ZN6memopt22norm_vectorized_kernelI" + MANGLED[dtype]
    wanted = [int(rms), threads, int(add), 1, ROW_VECS, 16, 0, 0]
    for name, use in usage.items():
        if name.startswith(prefix) and sass_audit.template_values(name) == wanted:
            return use["REG"]
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dtype", default="bf16", choices=sorted(MANGLED))
    parser.add_argument("--sms", type=int, default=132)
    parser.add_argument("--rows", type=int, nargs="+", default=[512, 4096, 16384])
    args = parser.parse_args()
    from torch_memopt import _C

    tool = sass_audit.cuobjdump()
    if tool is None:
        raise SystemExit("no cuobjdump: on PATH, in CUDA_HOME or in triton's wheel")
    cubin = sass_audit.cubin_of(_C.__file__, tool, "norm_cuda", tempfile.mkdtemp())
    if cubin is None:
        raise SystemExit("no sm_90a cubin of norm_cuda in this build")
    usage = sass_audit.resource_usage(cubin, tool)
    print(f"{'op':15s} {'N':>5s} {'threads':>7s} {'regs':>4s} {'blocks/SM':>9s} "
          f"{'rows/wave':>9s}  " + "  ".join(f"{rows:>6d} rows" for rows in args.rows))
    for op, (rms, add) in OPS.items():
        for width in WIDTHS:
            threads = instance_threads(width, ELEMENT_BYTES[args.dtype], add)
            registers = late_registers(usage, args.dtype, rms, threads, add)
            if registers is None:
                continue
            block = max(threads, MIN_BLOCK)
            allocated = math.ceil(registers / 8) * 8
            blocks = min(REGISTER_FILE // (allocated * block), MAX_THREADS_PER_SM // block, 32)
            per_wave = blocks * (block // threads) * args.sms
            cells = []
            for rows in args.rows:
                waves = rows / per_wave
                tail = 1 < waves < 8 and 0.05 <= waves - math.floor(waves) <= 0.5
                cells.append(f"{waves:6.2f}{'*' if tail else ' '}    ")
            print(f"{op:15s} {width:5d} {threads:7d} {registers:4d} {blocks:9d} {per_wave:9d}  "
                  + "  ".join(cells))


if __name__ == "__main__":
    main()
