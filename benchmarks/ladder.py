"""The FP32 GEMM ladder on one GPU: every rung of ``torch.ops.memopt.gemm`` beside
cuBLAS, in one run, with the published ladder's claims printed beside ours.

    python benchmarks/ladder.py                      # all sizes, all rungs (~4 min on an H200)
    python benchmarks/ladder.py --quick              # 1024³ and 4096³ (~1 min)
    python benchmarks/ladder.py --resources --ncu    # + cuobjdump resources, + ncu counters
    python benchmarks/ladder.py --no-timing --ncu --merge   # add ncu to an existing JSON

Per size: fresh fp32 inputs (torch.randn); cuBLAS = ``torch.mm`` with TF32 off; each
rung checked once against it (relative Frobenius error, flagged above 1e-4), then
timed: median of per-call CUDA-event times with L2 flushed before each call
(``triton.testing.do_bench``, or a few reps for slow rungs; see ``ladder/timing.py``),
and cross-checked with ``torch.utils.benchmark.Timer.blocked_autorange``. TFLOP/s =
2·M·N·K / time. ``--resources`` reads registers, shared and local memory per kernel
from ``cuobjdump``; ``--ncu`` profiles each rung alone under Nsight Compute
(``ladder/ncu.py``). The exit status is 1 when a rung disagreed with cuBLAS.

JSON written to ``--out`` (default benchmarks/results/gemm_ladder_h200.json)::

    meta: gpu, capability, sm_count, l2_bytes, torch, cuda, driver, triton, torch_memopt,
          python, git, date (UTC ISO), seed, timing, cross_check, cublas, tolerance,
          flop, argv
    published_speedup_vs_naive: {rung: claimed speed-up over naive}
    results: one record per (size, variant), variant "cublas" or a rung (incl. "auto"):
          shape {M, N, K}; variant; status "ok" | "skipped" | "error"; reason (str|null);
          rel_err_vs_cublas; correct (rel err <= tolerance; null for cuBLAS);
          probe_ms (one warm call timed alone, unflushed: it sizes the timing plan);
          ms (primary median); method "do_bench" | "event_reps"; reps (event_reps only);
          timer_ms (Timer cross-check, null for slow calls); tflops;
          speedup_vs_naive and pct_cublas (same size, same run);
          published_speedup_vs_naive (null where the published ladder has no figure)
    resources (null unless --resources): source, binary, arch (the one tabulated),
          archs, kernels: [{rung, mangled, demangled, template_args, arch, identifier,
          registers, stack, shared_static, local, fields (every cuobjdump field),
          launched (ncu saw the ladder launch it)}]
    ncu (null unless --ncu): tool, date, size {M, N, K}, metrics (the list collected),
          variants: [{variant, status, reason, filter "nvtx" | "name", kernels: [{id,
          name (mangled), block, grid, metrics {name: {value, unit}}}], main_kernel
          (index of the longest kernel), derived {duration_ms,
          global_ld_sectors_per_request, global_ldgsts_sectors_per_request,
          smem_bank_conflicts, smem_bank_conflicts_ld, smem_bank_conflicts_st,
          achieved_occupancy_pct, theoretical_occupancy_pct, sm_throughput_pct,
          dram_throughput_pct, dram_bytes, dram_bytes_over_compulsory,
          registers_per_thread, smem_static_bytes, smem_dynamic_bytes, block_size,
          grid_size}}]

``benchmarks/plot_ladder.py`` draws the chart and ``benchmarks/readme_tables.py`` the
README tables from this file.
"""
from __future__ import annotations

import argparse
import datetime
import functools
import json
import sys
import time
from pathlib import Path

from ladder import console, measure, ncu, resources, rungs, run_meta, tables, timing
from ladder.help_format import HelpFormatter

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "gemm_ladder_h200.json"
# Above the fp32 SIMT peak (ANCHORS.md: ~67 TFLOP/s on the H200) cuBLAS cannot be fp32.
CUBLAS_FP32_CEILING_TFLOPS = 70.0
UPPER_RUNGS = ("double_buffered", "register_blocked", "vectorized", "warptiled")

log = functools.partial(print, flush=True)


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=" ".join(__doc__.split("\n\n", 1)[0].split()).replace("``", ""),
        epilog="The JSON schema is in the module docstring.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--sizes", type=rungs.parse_sizes, default=None,
                        help="comma-separated sizes, 4096 or MxNxK (default: 1024³, 2048³, 4096³, "
                             "8192³, 8192x4096x4096, 4095³)")
    parser.add_argument("--quick", action="store_true", help="only 1024³ and 4096³")
    parser.add_argument("--variants", type=lambda s: s.split(","), default=None,
                        help="comma-separated rungs to run "
                             "(default: every rung this build offers, and auto)")
    parser.add_argument("--max-naive-size", type=int, default=None,
                        help="skip naive (recorded as skipped) where max(M, N, K) exceeds this")
    parser.add_argument("--rep-ms", type=float, default=100.0,
                        help="do_bench repetition budget per call (raised to >= 10 calls)")
    parser.add_argument("--timer-min-run-time", type=float, default=0.2,
                        help="Timer.blocked_autorange min_run_time, seconds")
    parser.add_argument("--no-cross-check", action="store_true", help="skip the Timer cross-check")
    parser.add_argument("--no-timing", action="store_true", help="skip the timing pass")
    parser.add_argument("--resources", action="store_true",
                        help="registers / shared / local memory per kernel from cuobjdump")
    parser.add_argument("--arch", default=None,
                        help="arch of the resource table, e.g. sm_90a "
                             "(default: the GPU's, else the highest)")
    parser.add_argument("--ncu", action="store_true", help="profile each rung under Nsight Compute")
    parser.add_argument("--ncu-size", type=rungs.parse_size, default=rungs.NCU_SIZE,
                        help=f"the size profiled by --ncu (default: {rungs.NCU_SIZE})")
    parser.add_argument("--ncu-variants", type=lambda s: s.split(","), default=None,
                        help="variants for --ncu (default: the rungs run, without auto, and cublas)")
    parser.add_argument("--ncu-timeout", type=float, default=300.0, help="seconds per ncu child")
    parser.add_argument("--merge", action="store_true",
                        help="keep the sections of an existing --out that this run does not remake")
    parser.add_argument("--seed", type=int, default=0, help="torch.manual_seed for the inputs")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help=f"results JSON (default: {DEFAULT_OUT.relative_to(ROOT)})")
    parser.add_argument("--ncu-child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    if args.sizes is None:
        args.sizes = rungs.QUICK_SIZES if args.quick else rungs.DEFAULT_SIZES
    return args


def ncu_child(variant: str, size: rungs.Size, seed: int) -> int:
    """Inside ncu: one call of ``variant`` in the NVTX range the parent filters on."""
    import torch

    from ladder import backend

    torch.manual_seed(seed)
    with backend.fp32_cublas():
        ((a, b),) = backend.fresh_inputs(size, 1)
        fn = backend.gemm_function(variant)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push(ncu.NVTX_RANGE)
        fn(a, b)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
    return 0


def collect_meta(args: argparse.Namespace, cuda: bool) -> dict:
    return {
        **run_meta.environment(cuda, args.seed),
        "timing": (
            f"median of per-call CUDA-event times, L2 flushed (256 MB zeroed) before each call: "
            f"triton.testing.do_bench(return_mode='median') under {timing.SLOW_CALL_MS:g} ms a call, "
            f"{timing.MIN_REPS}-{timing.MAX_SLOW_REPS} flushed reps above"
        ),
        "cross_check": (
            "torch.utils.benchmark.Timer.blocked_autorange median per call, input sets rotated "
            f"through 2x L2, calls under {timing.SLOW_CALL_MS:g} ms"
        ),
        "cublas": "torch.mm with torch.backends.cuda.matmul.allow_tf32 = False",
        "tolerance": measure.REL_ERR_TOLERANCE,
        "flop": "2·M·N·K",
        "argv": args.argv,
    }


def timing_pass(args, variants: list[str]) -> list[dict]:
    import torch

    from ladder import backend

    bench = backend.CudaBackend(rep_ms=args.rep_ms, timer_min_run_time=args.timer_min_run_time)
    if not bench.have_do_bench:
        log("triton is not importable: every call is timed by the flushed event loop")
    records = []
    with backend.fp32_cublas():
        for size in args.sizes:
            log(f"{size}: {size.flop / 1e9:.1f} GFLOP, {len(variants)} variants + cuBLAS")
            torch.manual_seed(args.seed + len(records))
            records += measure.measure_size(
                size, variants, bench, max_naive_size=args.max_naive_size,
                cross_check=not args.no_cross_check, log=log,
            )
            torch.cuda.empty_cache()
    return records


def ncu_pass(args, chosen: list[str]) -> dict | None:
    tool = ncu.find_ncu()
    if tool is None:
        log("--ncu: ncu not found on PATH, under CUDA_HOME or /usr/local/cuda: no ncu section")
        return None
    script = str(Path(__file__).resolve())

    def child(variant: str) -> list[str]:
        return [sys.executable, script, "--ncu-child", variant,
                "--ncu-size", str(args.ncu_size), "--seed", str(args.seed)]

    profiler = ncu.Profiler(tool, child, args.ncu_size, timeout=args.ncu_timeout, log=log)
    records, failures = [], 0
    for variant in chosen:
        if failures >= 2:
            records.append({"variant": variant, "status": "skipped",
                            "reason": "ncu failed twice in a row", "filter": None,
                            "kernels": [], "main_kernel": None, "derived": None})
            continue
        started = time.monotonic()
        record = profiler.profile(variant)
        failures = failures + 1 if record["status"] != "ok" else 0
        records.append(record)
        derived = record["derived"] or {}
        log(f"  ncu {variant:<17} {record['status']} in {time.monotonic() - started:.0f} s"
            + (f": {record['reason']}" if record["reason"] else
               f"  kernel {tables.number(derived.get('duration_ms'), 4)} ms"
               f"  ld sectors/request {tables.number(derived.get('global_ld_sectors_per_request'))}"
               f"  occupancy {tables.percent(derived.get('achieved_occupancy_pct'))}"))
    return {
        "tool": ncu.version(tool),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "size": args.ncu_size.as_dict(),
        "metrics": profiler.metrics,
        "variants": records,
    }


def launched_kernels(ncu_section: dict | None) -> dict[str, list[str]]:
    """rung -> mangled names of the kernels ncu saw it launch (cuBLAS and auto left out)."""
    if not ncu_section:
        return {}
    return {
        record["variant"]: [k["name"] for k in record["kernels"] if k.get("name")]
        for record in ncu_section["variants"]
        if record["status"] == "ok" and record["variant"] not in (rungs.CUBLAS, rungs.AUTO)
    }


def resources_pass(args, ncu_section: dict | None, capability) -> dict | None:
    tool = resources.find_cuobjdump()
    if tool is None:
        log("--resources: cuobjdump not found (PATH, CUDA_HOME, /usr/local/cuda, triton): "
            "no resources section")
        return None
    section = resources.collect(resources.extension_path(), tool, capability=capability,
                                launched=launched_kernels(ncu_section))
    if args.arch:
        section["arch"] = args.arch
    return section


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.ncu_child:
        return ncu_child(args.ncu_child, args.ncu_size, args.seed)
    import torch

    import torch_memopt

    cuda = torch.cuda.is_available() and torch_memopt.built_with_cuda()
    if not cuda and (not args.no_timing or args.ncu):
        log("timing and --ncu need a CUDA GPU and a CUDA build; on this machine only "
            "--no-timing --resources can run")
        return 2
    available = torch_memopt.variants("gemm", "cuda") if cuda else []
    try:
        variants = rungs.select_rungs(available, args.variants) if cuda else []
        ncu_variants = rungs.select_rungs([*available, rungs.CUBLAS], args.ncu_variants) \
            if args.ncu_variants else [v for v in variants if v != rungs.AUTO] + [rungs.CUBLAS]
    except ValueError as error:
        log(str(error))
        return 2
    old = json.loads(args.out.read_text()) if args.merge and args.out.exists() else {}
    document = {
        "meta": collect_meta(args, cuda),
        "published_speedup_vs_naive": dict(rungs.PUBLISHED_SPEEDUP),
        "results": [],
        "resources": old.get("resources"),
        "ncu": old.get("ncu"),
    }
    started = time.monotonic()
    if args.no_timing:
        document["meta"] = old.get("meta", document["meta"])
        document["results"] = old.get("results", [])
    else:
        log(f"GEMM ladder: {', '.join(variants)} at {', '.join(map(str, args.sizes))}")
        document["results"] = timing_pass(args, variants)
    if args.ncu:
        document["ncu"] = ncu_pass(args, ncu_variants)
    if args.resources:
        capability = torch.cuda.get_device_capability() if cuda else None
        document["resources"] = resources_pass(args, document["ncu"], capability)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    console.report(document, log)
    log(f"\nwrote {args.out} in {time.monotonic() - started:.0f} s")
    return print_warnings(document)


def print_warnings(document: dict) -> int:
    """Print what needs a look; 1 if a rung disagreed with cuBLAS."""
    wrong = [r for r in document["results"] if r["correct"] is False]
    for record in wrong:
        log(f"WARNING: {record['variant']} at {rungs.Size(**record['shape'])}: relative error "
            f"{record['rel_err_vs_cublas']:.2e} against cuBLAS")
    for record in document["results"]:
        if record["variant"] == rungs.CUBLAS and (record["tflops"] or 0) > CUBLAS_FP32_CEILING_TFLOPS:
            log(f"WARNING: cuBLAS at {record['tflops']:.0f} TFLOP/s is above the fp32 SIMT peak: "
                "TF32 may be on")
    if document["resources"]:
        for line in resources.spill_warnings(document["resources"], UPPER_RUNGS):
            log(f"WARNING: local memory or stack in an upper rung: {line}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
