"""Probes 1-3: what each memory level costs. The latency staircase (registers, shared
memory, then a pointer chase over working sets from 4 KB up, whose plateaus are L1, L2
and HBM), shared-memory bandwidth and bank conflicts, global-memory bandwidth,
coalescing and load width. Each returns (rows, series): the table's rows and the raw
series the plots draw."""
from __future__ import annotations

import math

import torch

from torch_memopt.probe.claims import Row, at_least, costs_at_least, in_range
from torch_memopt.probe.timing import gbps, median_ms

PROBE = torch.ops.memopt_probe


def _per_step(counts: torch.Tensor, steps: int) -> tuple[float, float]:
    """(cycles, ns) a step from a probe's int64 [cycles, ns, sink] result."""
    cycles, ns, _ = counts.tolist()
    return cycles / steps, ns / steps


def _chain(n: int, device) -> torch.Tensor:
    """A random single cycle through n int32 slots: chain[perm[i]] = perm[i + 1], so a
    chase visits every slot once in an order no prefetcher can guess."""
    perm = torch.randperm(n, device=device, dtype=torch.int64)
    chain = torch.empty(n, device=device, dtype=torch.int32)
    chain[perm] = torch.roll(perm, -1).to(torch.int32)
    return chain


def latency(quick: bool) -> tuple[list[Row], dict]:
    """Probe 1: the latency staircase, in cycles (clock64) and ns (%globaltimer)."""
    device = torch.device("cuda")
    steps = 4096 if quick else 16384
    reg_cycles, reg_ns = _per_step(PROBE.register_chain(steps), steps)
    smem_cycles, smem_ns = _per_step(PROBE.smem_latency(4096, steps), steps)
    top = 256 * 2**20 if quick else 4 * 2**30
    free = torch.cuda.mem_get_info()[0]
    sizes, cycles, ns = [], [], []
    size = 4 * 2**10
    while size <= min(top, free // 3):
        n = size // 4
        chain = _chain(n, device)
        c, t = _per_step(PROBE.pointer_chase(chain, steps, min(n, 1 << 22)), steps)
        sizes.append(size), cycles.append(c), ns.append(t)
        del chain
        size *= 4 if quick else 2

    def plateau(low: int, high: int) -> float:
        picked = [c for s, c in zip(sizes, cycles) if low <= s <= high]
        return sorted(picked)[len(picked) // 2] if picked else math.nan

    l1 = plateau(4 * 2**10, 64 * 2**10)
    l2 = plateau(2 * 2**20, 16 * 2**20)
    hbm = plateau(256 * 2**20, 64 * 2**30)
    cycles_per_ns = reg_cycles / reg_ns if reg_ns else math.nan
    rows = [
        Row("1 latency", "register ~1 cycle", f"{reg_cycles:.1f} cycles a dependent FFMA",
            in_range(reg_cycles, 1, 1), reg_cycles, "cycles"),
        Row("1 latency", "shared memory ~20-30 cycles", f"{smem_cycles:.0f} cycles ({smem_ns:.1f} ns)",
            in_range(smem_cycles, 20, 30), smem_cycles, "cycles"),
        Row("1 latency", "L1 ~30 cycles", f"{l1:.0f} cycles (4-64 KB working sets)",
            in_range(l1, 30, 30), l1, "cycles"),
        Row("1 latency", "L2 ~200 cycles", f"{l2:.0f} cycles (2-16 MB)", in_range(l2, 200, 200), l2,
            "cycles"),
        Row("1 latency", "global (HBM) 400-800 cycles",
            f"{hbm:.0f} cycles ({hbm / cycles_per_ns:.0f} ns, ≥ 256 MB)" if not math.isnan(hbm)
            else "not reached (working sets stop below 256 MB)",
            in_range(hbm, 400, 800) if not math.isnan(hbm) else "not measured", hbm, "cycles"),
    ]
    return rows, {"latency": {"bytes": sizes, "cycles": cycles, "ns": ns}}


def shared_memory(quick: bool) -> tuple[list[Row], dict]:
    """Probe 2: shared-memory bandwidth (chip and per SM), bank conflicts by stride and
    the 32×32 tile read by columns against its 32×33 padding."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    blocks, iters = sms * 4, 256 if quick else 1024
    out = torch.empty(blocks * 1024, device="cuda")
    strides = [0, 1, 2, 4, 8, 16, 32]
    rates = {}
    for stride in strides:
        ms = median_ms(lambda: PROBE.smem_read(blocks, stride, iters, out))
        rates[stride] = gbps(blocks * 1024 * iters * 4, ms)
    tile_out = torch.empty(blocks * 256, device="cuda")
    tile = {padded: median_ms(lambda: PROBE.smem_tile_columns(blocks, padded, iters, tile_out))
            for padded in (False, True)}
    chip = rates[1] / 1e3  # TB/s
    conflict_32 = rates[1] / rates[32]
    rows = [
        Row("2 shared memory", "bandwidth ~19 TB/s for the whole chip",
            f"{chip:.1f} TB/s ({chip / sms * 1e3:.0f} GB/s an SM)", in_range(chip, 19, 19), chip, "TB/s"),
        Row("2 shared memory", "stride 32: a 32-way bank conflict (32× slower than stride 1)",
            f"{conflict_32:.1f}× slower", in_range(conflict_32, 32, 32), conflict_32, "×"),
        Row("2 shared memory", "broadcast (one word for the warp) is conflict-free",
            f"{rates[0] / rates[1]:.2f}× stride 1's rate", in_range(rates[0] / rates[1], 1, 1),
            rates[0] / rates[1], "×"),
        Row("2 shared memory", "a 32×32 tile read by columns: 32-way; 32×33 padding removes it",
            f"padding {tile[False] / tile[True]:.1f}× faster", in_range(tile[False] / tile[True], 32, 32),
            tile[False] / tile[True], "×"),
    ]
    return rows, {"bank_conflicts": {"stride": strides, "gbps": [rates[s] for s in strides]}}


def global_memory(quick: bool) -> tuple[list[Row], dict]:
    """Probe 3: HBM copy / read / write bandwidth; coalescing by stride and by misaligned
    offset; 4-, 8- and 16-byte loads a thread."""
    n = (256 if quick else 1024) * 2**20 // 4
    src = torch.rand(n, device="cuda")
    dst = torch.empty_like(src)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    sink = torch.empty(sms * 8 * 256, device="cuda")  # a float a thread of the op's grid
    copy = gbps(2 * n * 4, median_ms(lambda: PROBE.global_copy(src, dst, 16)))
    read = {v: gbps(n * 4, median_ms(lambda: PROBE.global_read(src, v, sink))) for v in (4, 8, 16)}
    write = gbps(n * 4, median_ms(lambda: PROBE.global_write(dst, 16)))
    # Every stride spans all of src (n / stride threads, one float each, to a dense sink):
    # stride 1 then moves 2 x 1 GB, ~500 us. With n / 32 threads for every stride it moved
    # 64 MB, and the call's ~25 us of host work made it read 784 GB/s, below stride 2.
    strided_sink = torch.empty(n, device="cuda")
    strides = [1, 2, 4, 8, 16, 32]
    by_stride = [gbps(n // s * 4, median_ms(lambda: PROBE.strided_read(src, s, 0, n // s, strided_sink)))
                 for s in strides]
    offsets = [0, 1, 2, 4, 8, 16, 31]
    threads = n - offsets[-1]
    by_offset = [gbps(threads * 4, median_ms(lambda: PROBE.strided_read(src, 1, o, threads, strided_sink)))
                 for o in offsets]
    best = max(copy, read[16], write) / 1e3
    rows = [
        Row("3 global memory", "HBM bandwidth 1-3.4 TB/s",
            f"copy {copy / 1e3:.2f}, read {read[16] / 1e3:.2f}, write {write / 1e3:.2f} TB/s",
            in_range(best, 1, 3.4), best, "TB/s"),
        Row("3 global memory", "uncoalesced (stride 32) reads waste bandwidth",
            f"stride 32 at {by_stride[-1] / by_stride[0]:.3f}× stride 1's useful GB/s",
            "holds" if by_stride[-1] < by_stride[0] / 4 else "off: stride 32 costs < 4×",
            by_stride[-1] / by_stride[0], "×"),
        Row("3 global memory", "misaligned starts cost bandwidth",
            f"offset 1: {by_offset[1] / by_offset[0]:.2f}× offset 0", costs_at_least(by_offset[1] / by_offset[0], 0.5, 0.9),
            by_offset[1] / by_offset[0], "×"),
        Row("3 global memory", "16-byte loads a thread beat 4-byte loads",
            f"read 4 / 8 / 16 B: {read[4] / 1e3:.2f} / {read[8] / 1e3:.2f} / {read[16] / 1e3:.2f} TB/s",
            at_least(read[16] / read[4], 1.05), read[16] / read[4], "×"),
    ]
    series = {"coalescing": {"stride": strides, "gbps": by_stride},
              "alignment": {"offset": offsets, "gbps": by_offset},
              "load_width": {"bytes": [4, 8, 16], "gbps": [read[v] for v in (4, 8, 16)]}}
    return rows, series
