"""Probes 4-8: what each classic mistake costs. Array-of-structs against
struct-of-arrays, constant memory read the right and the wrong way, the local-memory
trap, occupancy bought with register caps and shared memory, and unified memory
against explicit copies. Each returns (rows, series)."""
from __future__ import annotations

import torch

from torch_memopt.probe.claims import Row, at_least, does_not_apply, in_range
from torch_memopt.probe.timing import gbps, median_ms

PROBE = torch.ops.memopt_probe


def aos_soa(quick: bool) -> tuple[list[Row], dict]:
    """Probe 4: the particle update x += v·dt in both layouts (24 B read, 12 B written
    a particle)."""
    n = (4 if quick else 32) * 2**20
    aos = torch.rand(n, 6, device="cuda")
    soa = aos.t().contiguous()
    moved = n * 36
    t_aos = median_ms(lambda: PROBE.particles_aos(aos, 1e-3))
    t_soa = median_ms(lambda: PROBE.particles_soa(soa, 1e-3))
    rows = [Row("4 AoS vs SoA", "struct-of-arrays beats array-of-structs (coalesced)",
                f"SoA {t_soa * 1e3:.0f} µs ({gbps(moved, t_soa):,.0f} GB/s), AoS {t_aos * 1e3:.0f} µs "
                f"({gbps(moved, t_aos):,.0f} GB/s): {t_aos / t_soa:.2f}×",
                at_least(t_aos / t_soa, 1.1), t_aos / t_soa, "×")]
    return rows, {"aos_soa": {"aos_ms": t_aos, "soa_ms": t_soa, "particles": n}}


def ldg_verdict(speedup: float) -> str:
    """__ldg's claim is a gain; within 5% of plain loads there is none to claim. On sm_70
    and later, plain global loads are cached in L1 too (the unified L1/texture cache), so
    the read-only path has nothing left to add for a table that fits there (H200: 0.99×,
    2026-11-30; issue 5's const_weights case study found the same, 1.00×)."""
    if speedup < 1.05:
        return does_not_apply(f"plain loads are cached in L1 too: __ldg {speedup:.2f}×")
    return "holds"


def constant_memory(quick: bool) -> tuple[list[Row], dict]:
    """Probe 5: one table read four ways: constant memory with a warp-uniform address
    (broadcast) and with per-lane addresses, and per-lane through __ldg and plain loads."""
    table = torch.rand(8192, device="cuda")
    threads, iters = 132 * 2048, 256 if quick else 1024
    out = torch.empty(threads, device="cuda")
    names = ["constant, broadcast", "constant, divergent", "__ldg, divergent", "global, divergent"]
    ms = [median_ms(lambda: PROBE.constant_read(table, mode, threads, iters, out)) for mode in range(4)]
    rows = [
        Row("5 constant memory", "a broadcast constant read runs at about register speed",
            f"broadcast {ms[0] / ms[3]:.2f}× the time of plain global loads",
            "holds" if ms[0] <= min(ms[2], ms[3]) else "off: slower than global loads",
            ms[0] / ms[3], "×"),
        Row("5 constant memory", "divergent constant reads serialize: slower than global",
            f"divergent constant {ms[1] / ms[3]:.1f}× the time of plain global loads",
            at_least(ms[1] / ms[3], 2.0), ms[1] / ms[3], "×"),
        Row("5 constant memory", "__ldg (read-only path) for per-thread read-only data",
            f"__ldg at {ms[3] / ms[2]:.2f}× the speed of plain loads", ldg_verdict(ms[3] / ms[2]),
            ms[3] / ms[2], "×"),
    ]
    return rows, {"constant": {"mode": names, "ms": ms}}


def local_memory(quick: bool) -> tuple[list[Row], dict]:
    """Probe 6: a dynamically indexed 16-float array (local memory) against the same
    code unrolled (registers)."""
    x = torch.rand((8 if quick else 64) * 2**20, device="cuda")
    out_trap, out_fixed = torch.empty_like(x), torch.empty_like(x)
    t_trap = median_ms(lambda: PROBE.local_array(x, out_trap, False))
    t_fixed = median_ms(lambda: PROBE.local_array(x, out_fixed, True))
    same = torch.allclose(out_trap, out_fixed)
    local_trap, local_fixed = PROBE.local_bytes(False), PROBE.local_bytes(True)
    rows = [Row("6 local memory", "the local-array trap costs 3.2× against the unrolled version",
                f"{t_trap / t_fixed:.2f}× ({local_trap} local bytes a thread, fixed: {local_fixed}); "
                f"outputs {'equal' if same else 'DIFFER'}",
                in_range(t_trap / t_fixed, 3.2, 3.2) if same else "wrong: the outputs differ",
                t_trap / t_fixed, "×")]
    return rows, {"local": {"trap_ms": t_trap, "fixed_ms": t_fixed, "trap_local_bytes": local_trap,
                            "fixed_local_bytes": local_fixed}}


def occupancy(quick: bool) -> tuple[list[Row], dict]:
    """Probe 7: one FMA-heavy kernel at register caps 32-255 and with shared memory
    taken to lower occupancy: where more occupancy stops paying."""
    x = torch.rand((4 if quick else 16) * 2**20, device="cuda")
    out = torch.empty_like(x)
    points = []
    for cap in (32, 64, 128, 255):
        for smem in (0, 48 * 1024, 100 * 1024):
            regs, local, blocks, _ = PROBE.occupancy_info(cap, 256, smem).tolist()
            ms = median_ms(lambda: PROBE.occupancy_run(x, out, cap, 256, smem))
            points.append({"cap": cap, "smem": smem, "registers": regs, "local_bytes": local,
                           "blocks_per_sm": blocks, "warps_per_sm": blocks * 8, "ms": ms})
    best = min(points, key=lambda p: p["ms"])
    fullest = max(points, key=lambda p: (p["warps_per_sm"], -p["ms"]))
    rows = [Row("7 occupancy", "more occupancy helps, up to a point",
                f"fastest: {best['warps_per_sm']} warps an SM ({best['registers']} registers, "
                f"{best['smem'] // 1024} KB smem); the most warps ({fullest['warps_per_sm']}, "
                f"{fullest['local_bytes']} B spilled) {fullest['ms'] / best['ms']:.2f}× slower",
                "holds" if best["warps_per_sm"] < fullest["warps_per_sm"] else
                "more occupancy paid all the way here", best["warps_per_sm"], "warps")]
    return rows, {"occupancy": points}


def unified_memory(quick: bool) -> tuple[list[Row], dict]:
    """Probe 8: cudaMallocManaged touched by the CPU then a kernel (on-demand migration),
    the same after cudaMemPrefetchAsync, and an explicit copy from pinned memory."""
    nbytes = (64 if quick else 512) * 2**20
    if torch.cuda.mem_get_info()[0] < 4 * nbytes:
        rows = [Row("8 unified memory", "prefetch helps; explicit copies are fastest", "not run",
                    does_not_apply("not enough free GPU memory"))]
        return rows, {}
    total = [PROBE.unified_memory(nbytes, mode).tolist()[0] for mode in range(3)]
    rows = [
        Row("8 unified memory", "cudaMemPrefetchAsync helps on-demand migration",
            f"{total[0]:.1f} ms on demand, {total[1]:.1f} ms prefetched ({total[0] / total[1]:.1f}×)",
            at_least(total[0] / total[1], 1.1), total[0] / total[1], "×"),
        Row("8 unified memory", "an explicit cudaMemcpy is the fastest",
            f"{total[2]:.1f} ms ({gbps(nbytes, total[2]):,.0f} GB/s with the kernel)",
            "holds" if total[2] <= min(total[:2]) else "off: a managed path was faster",
            total[2], "ms"),
    ]
    return rows, {"unified": {"bytes": nbytes, "on_demand_ms": total[0], "prefetch_ms": total[1],
                              "explicit_ms": total[2]}}
