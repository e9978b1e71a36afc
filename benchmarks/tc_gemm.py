"""The tensor-core GEMM acceptance run on one GPU: ours (``auto`` and each rung that
applies) beside cuBLAS, bfloat16 and float16, in one process, on the same inputs.

    python benchmarks/tc_gemm.py            # every shape, both dtypes (~1.5 min, estimated)
    python benchmarks/tc_gemm.py --quick    # 4096³, 4095³ and M = 1 (~30 s, estimated)

Shapes (M×N×K): 4096³ and 8192³ (gemm: ``torch.mm(a [M, K], b [K, N])``); 8192×4096×4096
and 8192×11008×4096 as linear with a bias (``F.linear(x, w [N, K], bias)``); 4095³ and
4097×4096×4100 (gemm, odd); M in {1, 8, 16, 64} with N = K = 4096 and N = 11008,
K = 4096 (linear, no bias). Rungs: ``wgmma`` above M = 64, ``splitk`` and ``gemv`` at
or below it, ``mma`` everywhere; one missing from ``torch_memopt.variants`` is recorded as skipped.

Each call is checked once (relative Frobenius error against float64, or for M > 256
against fp32 ``torch.mm`` on 256 sampled rows; 1e-2 for bf16, 5e-3 for fp16), then
timed: median of flushed calls by ``triton.testing.do_bench(return_mode='median')``,
cross-checked by ``torch.utils.benchmark.Timer.blocked_autorange`` over input sets
rotated through 2x L2. TFLOP/s = 2·M·N·K / time; ratio = cuBLAS time / ours; for the
skinny shapes the weight bandwidth 2·N·K / time and its % of a 2 GiB device-to-device
copy measured in the same run (bytes read + written). A wrong result gets no speed
figures and the verdict WRONG. The table printed last puts the issue's target beside
each row (≥ 1.0× at 4096³ and 8192³, ≥ 0.95× for linear with bias, ≥ 3× at the odd
shapes, ≥ 1.3× for skinny M, M = 1 at ≥ 80 % of copy) with PASS / MISS for ``auto``.
The exit status is 1 when a measured call gave a wrong result or a fault ended the
run (what was measured is still written), 2 without a GPU.

JSON written to ``--out`` (default benchmarks/results/tc_gemm_h200.json)::

    meta: gpu, capability, sm_count, l2_bytes, torch, cuda, driver, triton, torch_memopt,
          python, git, date (UTC ISO), seed, argv, quick, dtypes, variants_available
          {gemm, linear}, timing, cross_check, cublas, reference, tolerance {dtype: tol},
          flop, weight_bytes, wall_s, aborted (only when a fault ended the run early)
    copy: bytes (the tensor), bytes_counted (read + written), ms_do_bench, method, gbps
    records: one per (dtype, shape, variant), variant "cublas", "auto" or a rung:
          dtype; layout "gemm" | "linear"; bias; group "square" | "linear_bias" | "odd" |
          "skinny"; shape {M, N, K}; variant; status "ok" | "skipped" | "error";
          reason (str|null); method "do_bench" | "event_reps xN"; probe_ms (one warm
          call, unflushed); ms_do_bench (primary median); ms_timer (Timer cross-check);
          timer_sets (input sets rotated); tflops; cublas_ms and cublas_ms_timer (the
          same case's cuBLAS); ratio (cublas_ms / ms_do_bench) and ratio_timer;
          weight_gbps and pct_copy (skinny shapes only); ms_clean_l2,
          weight_gbps_clean_l2, pct_copy_clean_l2 (skinny only: the median after an
          L2 flush that reads rather than writes, so no dirty lines are written back
          inside the call; reported beside do_bench's, never judged); rel_err; reference (what
          rel_err is against); correct; target {ratio, pct_copy} (null for cuBLAS);
          verdict "PASS" | "MISS" | "WRONG" | null.
          tflops, ratio, weight_gbps and pct_copy are null for a wrong result.
"""
from __future__ import annotations

import argparse
import functools
import json
import sys
import time
from pathlib import Path

from ladder import run_meta
from ladder.json_safe import json_safe
from ladder.help_format import HelpFormatter
from tc_gemm import cases, measure, report

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "tc_gemm_h200.json"

log = functools.partial(print, flush=True)


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=" ".join(__doc__.split("\n\n", 1)[0].split()).replace("``", ""),
        epilog="Shapes, timing and the JSON schema are in the module docstring.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--quick", action="store_true", help="only 4096³, 4095³ and M = 1")
    parser.add_argument("--dtypes", type=cases.parse_dtypes, default=cases.DTYPES,
                        help="comma-separated: bf16, fp16 (default: both)")
    parser.add_argument("--rep-ms", type=float, default=100.0,
                        help="do_bench repetition budget per call (raised to >= 10 calls)")
    parser.add_argument("--timer-min-run-time", type=float, default=0.1,
                        help="Timer.blocked_autorange min_run_time, seconds")
    parser.add_argument("--no-cross-check", action="store_true", help="skip the Timer cross-check")
    parser.add_argument("--seed", type=int, default=0, help="torch.manual_seed base for the inputs")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help=f"results JSON (default: {DEFAULT_OUT.relative_to(ROOT)})")
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    args.cases = cases.QUICK_CASES if args.quick else cases.FULL_CASES
    return args


def collect_meta(args: argparse.Namespace, available: dict[str, list[str]]) -> dict:
    import torch

    matmul = torch.backends.cuda.matmul
    return {
        **run_meta.environment(True, args.seed),
        "argv": args.argv,
        "quick": args.quick,
        "dtypes": list(args.dtypes),
        "variants_available": available,
        "timing": (
            "median of per-call CUDA-event times, L2 flushed (256 MB zeroed) before each call: "
            "triton.testing.do_bench(return_mode='median'), at least 10 calls"
            f"; {measure.SLOW_CALL_MS:g} ms and slower calls: 3 flushed reps"
        ),
        "cross_check": (
            "torch.utils.benchmark.Timer.blocked_autorange median per call "
            f"(min_run_time {args.timer_min_run_time:g} s), input sets rotated through 2x L2"
        ),
        "cublas": (
            "torch.mm (gemm layout), F.linear (linear layouts, with the bias where set); "
            f"allow_bf16_reduced_precision_reduction={matmul.allow_bf16_reduced_precision_reduction}, "
            f"allow_fp16_reduced_precision_reduction={matmul.allow_fp16_reduced_precision_reduction}"
        ),
        "reference": (
            f"float64 torch.mm at M <= {measure.FULL_REFERENCE_MAX_M}; above, fp32 torch.mm "
            f"(tf32 off) on {measure.SAMPLED_ROWS} rows spread over M, and every output finite"
        ),
        "tolerance": dict(measure.TOLERANCE),
        "flop": "2·M·N·K",
        "weight_bytes": "2·N·K",
        "wall_s": None,
    }


def main(argv=None) -> int:
    args = parse_args(argv)
    import torch

    import torch_memopt

    if not (torch.cuda.is_available() and torch_memopt.built_with_cuda()):
        log("tc_gemm.py times CUDA kernels: it needs a CUDA GPU and a torch_memopt build with CUDA")
        return 2
    from tc_gemm import backend

    started = time.monotonic()
    available = {op: torch_memopt.variants(op, "cuda") for op in ("gemm", "linear")}
    bench = backend.CudaBackend(rep_ms=args.rep_ms, timer_min_run_time=args.timer_min_run_time)
    if not bench.have_do_bench:
        log("triton is not importable: the primary figure comes from the flushed event loop")
    copy = bench.copy_bandwidth()
    log(f"device-to-device copy: {copy['gbps']:,.0f} GB/s ({copy['ms_do_bench']:.3f} ms for "
        f"{copy['bytes'] / 2 ** 30:g} GiB, read + written)")
    log(f"tensor-core GEMM: {', '.join(args.dtypes)} at {len(args.cases)} shapes; "
        f"gemm variants here: {', '.join(available['gemm'])}")
    document = {"meta": collect_meta(args, available), "copy": copy, "records": []}
    records = document["records"]
    try:
        for dtype in args.dtypes:
            for index, case in enumerate(args.cases):
                torch.manual_seed(args.seed + index)  # the same inputs for a shape in every run
                plan = cases.plan_variants(case, available)
                records += measure.measure_case(case, dtype, plan, bench, copy_gbps=copy["gbps"],
                                                cross_check=not args.no_cross_check, log=log)
                torch.cuda.empty_cache()
    except Exception as exc:  # a fault (a sticky CUDA error) ends the run: keep what was measured
        document["meta"]["aborted"] = f"{type(exc).__name__}: {str(exc).strip()[:500]}"
        log(f"run aborted: {document['meta']['aborted']}")
    document["meta"]["wall_s"] = round(time.monotonic() - started, 1)
    document = json_safe(document)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
    report.report(document, log)
    log(f"\nwrote {args.out} in {document['meta']['wall_s']:.0f} s")
    wrong = any(r["correct"] is False for r in document["records"])
    return 1 if wrong or "aborted" in document["meta"] else 0


if __name__ == "__main__":
    sys.exit(main())
