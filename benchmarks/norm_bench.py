"""The norm and softmax bandwidth run on one GPU (issue 5: memory-bound ops at the
bandwidth limit): ours (``auto`` and every variant) beside eager, torch.compile and
Liger-Kernel, float32 and bfloat16, in one process, on the same inputs.

    python benchmarks/norm_bench.py            # every shape, both dtypes (~4 min, estimated)
    python benchmarks/norm_bench.py --quick    # 16384×4096 per op, rms_norm 1×4096 (~30 s, estimated)
    python benchmarks/norm_bench.py --ops softmax --dtypes bf16

Ops: ``torch_memopt.layer_norm(x, [N], weight, bias)``, ``rms_norm(x, [N], weight)``,
``softmax(x, -1)``; weight and bias in x's dtype. Shapes (rows×N): the norms at
32768×768, 32768×1024, 16384×4096, 8192×8192, 4096×12288, 4096×1000; softmax at
32768×1024, 16384×4096, 4096×32768, 1024×131072, 1024×262144, 65536×197, 32768×1000;
decode rows 1, 8, 64 × 4096 for all three. Calls: eager (``F.layer_norm``,
``F.rms_norm``, ``torch.softmax``); ``torch.compile`` of the same (default mode,
``dynamic=False``, compiled afresh per shape and dtype, warm before timing); Liger-Kernel
where importable (else skipped); ``auto`` and every variant ``torch_memopt.variants(op,
"cuda")`` lists. A call that raises is recorded as an error, and the run goes on.

Each call is checked once (relative Frobenius error against the stock op in float64:
1e-5 for float32, 1e-2 for bfloat16; a wrong result is not timed and reads WRONG), then
timed: median of flushed calls by ``triton.testing.do_bench(return_mode='median')``,
as in tc_gemm.py. Bytes moved per call = input read + output written (rows·N each) +
weight (+ bias) (N each); GB/s = bytes / median time; % copy against a 2 GiB
device-to-device copy measured in the same run (bytes read + written). Targets for
``auto`` (PASS / MISS in the table printed last): at least 1.0× the faster of eager and
torch.compile, and from 64 MB moved at least 90 % of copy (85 % at N = 131072 and
262144); decode rows, judged by latency: at least 1.0× eager. The exit status is 1 when
a measured call gave a wrong result or a fault ended the run (what was measured is still
written), 2 without a GPU or without a CUDA build of torch_memopt.

JSON written to ``--out`` (default benchmarks/results/norm_bench_h200.json)::

    meta: gpu, capability, sm_count, l2_bytes, torch, cuda, driver, triton, torch_memopt,
          python, git, date (UTC ISO), seed, argv, quick, dtypes, ops, variants_available
          {op: [...]}, peers {eager, compile, liger (its version or why skipped)},
          timing, reference, tolerance {dtype: tol}, bytes, targets, wall_s,
          aborted (only when a fault ended the run early)
    copy: bytes (the tensor), bytes_counted (read + written), ms_do_bench, method, gbps
    records: one per (op, dtype, shape, call):
          op; dtype; group "bandwidth" | "decode"; shape {rows, N}; variant (a variant of
          ours, or the peer "eager" | "compile" | "liger"); kind "ours" | "peer";
          status "ok" | "skipped" | "error"; reason (str|null); bytes (moved per call);
          method "do_bench" | "event_reps xN"; probe_ms (one warm call, unflushed);
          ms (the median); us (the same in µs); gbps; pct_copy; eager_ms and compile_ms
          (the same case's peers); peer and peer_ms (ours only: the peer judged against);
          ratio (peer_ms / ms); rel_err; correct; target {ratio, pct_copy} (ours only);
          verdict "PASS" | "MISS" | "WRONG" | null (ours only).
          ms, us, gbps, pct_copy and ratio are null for a wrong result.
"""
from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path

from ladder import run_meta
from ladder.help_format import HelpFormatter
from norm_bench import cases, measure, report, results

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "norm_bench_h200.json"

log = functools.partial(print, flush=True)


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=" ".join(__doc__.split("\n\n", 1)[0].split()).replace("``", ""),
        epilog="Shapes, timing, targets and the JSON schema are in the module docstring.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--quick", action="store_true",
                        help="only 16384×4096 per op and rms_norm at 1×4096")
    parser.add_argument("--dtypes", type=cases.parse_dtypes, default=cases.DTYPES,
                        help="comma-separated: fp32, bf16 (default: both)")
    parser.add_argument("--ops", type=cases.parse_ops, default=cases.OPS,
                        help="comma-separated: layer_norm, rms_norm, softmax (default: all)")
    parser.add_argument("--rep-ms", type=float, default=100.0,
                        help="do_bench repetition budget per call (raised to >= 10 calls)")
    parser.add_argument("--seed", type=int, default=0, help="torch.manual_seed base for the inputs")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help=f"results JSON (default: {DEFAULT_OUT.relative_to(ROOT)})")
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    chosen = cases.QUICK_CASES if args.quick else cases.FULL_CASES
    args.cases = tuple(case for case in chosen if case.op in args.ops)
    return args


def collect_meta(args: argparse.Namespace, available: dict[str, list[str]], liger: str) -> dict:
    from tc_gemm.measure import SLOW_CALL_MS

    return {
        **run_meta.environment(True, args.seed),
        "argv": args.argv,
        "quick": args.quick,
        "dtypes": list(args.dtypes),
        "ops": list(args.ops),
        "variants_available": available,
        "peers": {
            "eager": "F.layer_norm, F.rms_norm, torch.softmax",
            "compile": "torch.compile of the eager op, default mode, dynamic=False, "
                       "torch._dynamo.reset() and a fresh compile per shape and dtype",
            "liger": liger,
        },
        "timing": (
            "median of per-call CUDA-event times, L2 flushed (256 MB zeroed) before each call: "
            "triton.testing.do_bench(return_mode='median'), at least 10 calls"
            f"; {SLOW_CALL_MS:g} ms and slower calls: 3 flushed reps"
        ),
        "reference": "the stock op on the same inputs in float64 (rms_norm with eps = float32's "
                     "eps, what F.rms_norm uses for fp32 and bf16), every element",
        "tolerance": dict(measure.TOLERANCE),
        "bytes": "input + output (rows·N each) + weight (+ bias) (N each), in the input dtype",
        "targets": (
            f"auto: >= {cases.PEER_RATIO:g}x the faster of eager and torch.compile; from "
            f"{cases.LARGE_BYTES / 1e6:g} MB moved also >= {cases.PCT_COPY:g}% of copy "
            f"({cases.LONG_ROW_PCT_COPY:g}% at N in {list(cases.LONG_ROWS)}); decode rows: "
            f">= {cases.PEER_RATIO:g}x eager"
        ),
        "wall_s": None,
    }


def main(argv=None) -> int:
    args = parse_args(argv)
    import torch

    import torch_memopt

    if not (torch.cuda.is_available() and torch_memopt.built_with_cuda()):
        log("norm_bench.py times CUDA kernels: it needs a CUDA GPU and a torch_memopt build with CUDA")
        return 2
    from norm_bench import backend, calls

    started = time.monotonic()
    available = {op: torch_memopt.variants(op, "cuda") for op in args.ops}
    liger_missing = calls.liger_missing()
    peer_skips = {cases.LIGER: liger_missing} if liger_missing else {}
    bench = backend.CudaBackend(rep_ms=args.rep_ms)
    if not bench.have_do_bench:
        log("triton is not importable: the primary figure comes from the flushed event loop")
    copy = bench.copy_bandwidth()
    log(f"device-to-device copy: {copy['gbps']:,.0f} GB/s ({copy['ms_do_bench']:.3f} ms for "
        f"{copy['bytes'] / 2 ** 30:g} GiB, read + written)")
    log(f"norms and softmax: {', '.join(args.dtypes)} at {len(args.cases)} shapes; variants here: "
        + "; ".join(f"{op} {', '.join(names) or 'none'}" for op, names in available.items()))
    meta = collect_meta(args, available, liger_missing or f"liger-kernel {calls.liger_version()}")
    records = []
    try:
        for dtype in args.dtypes:
            for index, case in enumerate(args.cases):
                torch.manual_seed(args.seed + index)  # the same inputs for a shape in every run
                plan = cases.plan_calls(case, available, peer_skips)
                records += measure.measure_case(case, dtype, plan, bench, copy_gbps=copy["gbps"], log=log)
                torch.cuda.empty_cache()
    except Exception as exc:  # a fault (a sticky CUDA error) ends the run: keep what was measured
        meta["aborted"] = f"{type(exc).__name__}: {str(exc).strip()[:500]}"
        log(f"run aborted: {meta['aborted']}")
    meta["wall_s"] = round(time.monotonic() - started, 1)
    document = results.document(meta, copy, records)
    results.write(args.out, document)
    report.report(document, log)
    log(f"\nwrote {args.out} in {meta['wall_s']:.0f} s")
    wrong = any(r["correct"] is False for r in document["records"])
    return 1 if wrong or "aborted" in meta else 0


if __name__ == "__main__":
    sys.exit(main())
