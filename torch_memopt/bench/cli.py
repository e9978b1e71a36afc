"""The command line of ``python -m torch_memopt.bench``: arguments, the suites' cases,
the run, then per suite its JSON, its tables and its summary; ``main(argv)`` runs
in-process for the tests. Every choice is checked before anything is timed, so a typo
costs an error message, not minutes of timing followed by a crash.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

import torch_memopt

from . import environment, peers, plot, report, results, timing
from .calls import OPS, shape_text
from .peers import Unavailable
from .progress import ProgressBar
from .runner import run_case
from .suites import DEFAULT, SUITES, Context

PROG = "python -m torch_memopt.bench"
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
DTYPE_ALIASES = {"fp32": "float32", "fp16": "float16", "half": "float16", "bf16": "bfloat16"}
# Cross-check Timer seconds a call: long enough for a few blocks of a 10 ms call.
CROSS_CHECK_S = 0.1
QUICK_REP_MS = 30.0  # --quick: 30 ms of calls a median (still >= 10 calls)


def build_parser() -> argparse.ArgumentParser:
    listing = "\n".join(f"  {name:<16} {module.TITLE}" for name, module in SUITES.items())
    parser = argparse.ArgumentParser(
        prog=PROG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Time torch_memopt's kernels against the best stock path (cuBLAS, eager, "
                    "torch.compile, Liger-Kernel) on the same inputs, and write the records as "
                    "JSON. ratio (× best) = the fastest peer's time / ours: > 1, ours is faster.",
        epilog=f"suites (default {DEFAULT}):\n{listing}\n\nTiming: torch_memopt/bench/timing.py.")
    parser.add_argument("suites", nargs="*", metavar="SUITE",
                        help=f"suites to run, or 'all' (default: {DEFAULT})")
    parser.add_argument("--quick", action="store_true",
                        help="fewer, smaller cases and shorter timing (the default suite: "
                             "under a minute on an H200)")
    parser.add_argument("--device", help="cpu, cuda or cuda:N (default: cuda if available)")
    parser.add_argument("--dtype", action="append", metavar="DTYPE",
                        help="keep these dtypes: float32, float16, bfloat16 (fp32, fp16, bf16)")
    parser.add_argument("--op", action="append", metavar="OP", help="keep these ops (e2e: models)")
    parser.add_argument("--shape", action="append", metavar="KEY=V[,V...]",
                        help="keep the cases whose shape has KEY in the values, e.g. N=128256 "
                             "or rows=512,2048 (norm-grid: rows, N; GEMM suites: M, N, K)")
    parser.add_argument("--variant", action="append", metavar="NAME",
                        help="our variants to time, or 'all' (default: each suite's own)")
    parser.add_argument("--peers", action="append", metavar="NAME",
                        help=f"keep these peers, of {', '.join(peers.PEERS)}")
    parser.add_argument("--out", type=Path, default=results.DEFAULT_DIR, metavar="DIR",
                        help="folder of the results JSON (default: benchmarks/results)")
    parser.add_argument("--no-save", action="store_true", help="write no JSON")
    parser.add_argument("--plot", action="store_true", help="also draw each suite's PNG")
    parser.add_argument("--deadline-s", type=float, default=None,
                        help="start no case after this many seconds of the run; the suites save "
                             "what ran, their JSON naming the cases cut (for a GPU call with a "
                             "time limit, which would otherwise lose a suite whole)")
    check = parser.add_mutually_exclusive_group()
    check.add_argument("--cross-check", dest="cross_check", action="store_true", default=None,
                       help="also time with torch.utils.benchmark.Timer (default without --quick)")
    check.add_argument("--no-cross-check", dest="cross_check", action="store_false")
    parser.add_argument("--rep-ms", type=float, default=None,
                        help=f"ms of timed calls a median (default {timing.DEFAULT_REP_MS:g}; "
                             f"--quick {QUICK_REP_MS:g})")
    parser.add_argument("--pad-us", type=float, default=None,
                        help="idle the GPU at least this many µs before each timed call, every "
                             "implementation alike (default: twice each call's own enqueue time)")
    parser.add_argument("--flush", choices=("write", "deep"), default="write",
                        help="the L2 flush before each timed call: write (256 MiB zeroed, as "
                             "triton's do_bench) or deep (also evicts lines a kernel kept with an "
                             "evict_last hint; timing.KernelTimer says why)")
    parser.add_argument("--list", action="store_true", help="list the suites and exit")
    return parser


def listed(values: list[str] | None) -> list[str]:
    """Flatten repeated and comma-separated values, in order, without duplicates."""
    names = [name.strip() for value in values or [] for name in value.split(",")]
    return list(dict.fromkeys(name for name in names if name))


def choose_device(parser: argparse.ArgumentParser, given: str | None) -> torch.device:
    if given is None:
        given = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        device = torch.device(given)
    except RuntimeError:
        parser.error(f"--device {given!r} is not a device; expected cpu, cuda or cuda:N")
    if device.type == "cpu":
        return device
    if device.type != "cuda":
        parser.error(f"--device {given!r}: expected cpu, cuda or cuda:N, got a {device.type} device")
    if not torch.cuda.is_available():
        parser.error(f"--device {given!r}: no CUDA GPU is available to this process")
    index = torch.cuda.current_device() if device.index is None else device.index
    if index >= torch.cuda.device_count():
        parser.error(f"--device {given!r}: only {torch.cuda.device_count()} CUDA device(s) present")
    return torch.device("cuda", index)


def make_context(parser: argparse.ArgumentParser, args, device: torch.device) -> Context:
    dtypes = [DTYPE_ALIASES.get(name, name) for name in listed(args.dtype)]
    for name in dtypes:
        if name not in DTYPES:
            parser.error(f"--dtype {name!r} is not supported; choose from {', '.join(DTYPES)}")
    for name in listed(args.peers):
        if name not in peers.PEERS:
            parser.error(f"--peers {name!r} is not a peer; choose from {', '.join(peers.PEERS)}")
    return Context(device=device, quick=args.quick,
                   dtypes=[DTYPES[n] for n in dtypes] or None, ops=listed(args.op) or None,
                   variants=listed(args.variant) or None, peers=listed(args.peers) or None)


def shape_filter(parser: argparse.ArgumentParser, given: list[str] | None) -> dict[str, set[int]]:
    """--shape KEY=V[,V...] as {KEY: {V, ...}}; repeated keys add values."""
    wanted: dict[str, set[int]] = {}
    for text in given or []:
        key, sep, values = text.partition("=")
        try:
            numbers = {int(v) for v in values.split(",")}
        except ValueError:
            numbers = set()
        if not sep or not key or not numbers:
            parser.error(f"--shape {text!r}: expected KEY=V[,V...] with integer values, e.g. N=4096")
        wanted.setdefault(key, set()).update(numbers)
    return wanted


def keep_shapes(cases: list, wanted: dict[str, set[int]]) -> list:
    """The cases whose shape has every wanted key, each at one of its values."""
    return [c for c in cases if all(c.shape.get(k) in v for k, v in wanted.items())]


def choose_suites(parser: argparse.ArgumentParser, given: list[str]) -> list[str]:
    names = listed(given) or [DEFAULT]
    if "all" in names:
        return list(SUITES)
    for name in names:
        if name not in SUITES:
            parser.error(f"suite {name!r} does not exist; choose from {', '.join(SUITES)} or all")
    return names


def plan(names: list[str], ctx: Context,
         wanted: dict[str, set[int]] | None = None) -> dict[str, list | str]:
    """Each suite's cases (those of the wanted shapes), or why it cannot run here;
    ValueError for a ``--variant`` that no case of a suite has, or a ``--shape`` that
    leaves no case, before anything is timed."""
    planned: dict[str, list | str] = {}
    for name in names:
        try:
            planned[name] = SUITES[name].cases(ctx)
        except Unavailable as exc:
            planned[name] = str(exc)
            continue
        if wanted:
            kept = keep_shapes(planned[name], wanted)
            if planned[name] and not kept:
                raise ValueError(f"--shape: suite {name} has no case of that shape")
            planned[name] = kept
        offered = {impl.name for case in planned[name] for impl in case.impls if impl.kind == "ours"}
        offered |= {v for op in {case.op for case in planned[name]} if op in OPS
                    for v in torch_memopt.variants(op, ctx.device)}
        unknown = [v for v in ctx.variants or [] if v != "all" and v not in offered]
        if unknown and planned[name]:
            raise ValueError(f"--variant {', '.join(unknown)}: suite {name} has no such variant "
                             f"here; it has {', '.join(sorted(offered))}")
    return planned


def rep_ms_of(args) -> float:
    return args.rep_ms or (QUICK_REP_MS if args.quick else timing.DEFAULT_REP_MS)


def cross_check_of(args) -> bool:
    return args.cross_check if args.cross_check is not None else not args.quick


def past_deadline(args) -> bool:
    """Whether --deadline-s seconds have gone by since the run began (main's clock)."""
    return args.deadline_s is not None and time.monotonic() - args.started > args.deadline_s


def time_cases(todo: list, ctx: Context, meta: dict, args) -> tuple[list[dict], list, int]:
    """Every case run: the records (as dicts), the Compare table's measurements and the
    cases left unrun past --deadline-s."""
    timer = timing.KernelTimer(ctx.device, rep_ms_of(args), flush=args.flush, pad_us=args.pad_us)
    cross = cross_check_of(args)
    bar = ProgressBar(total=sum(len(c.impls) for c in todo))
    records, measurements = [], []
    try:
        for done, case in enumerate(todo):
            if past_deadline(args):
                return records, measurements, len(todo) - done
            with torch.inference_mode():
                case_records, outcomes = run_case(case, timer, copy_gbps=meta["copy_gbps"],
                                                  cross_check_s=CROSS_CHECK_S if cross else None,
                                                  progress=bar.step)
            records += [r.as_dict() for r in case_records]
            sub_label = f"{shape_text(case.shape)} {case.label}".strip()
            measurements += [report.measurement(f"{case.op} {case.dtype}", sub_label, name, o.samples_us)
                             for name, o in outcomes.items() if o.samples_us]
            if ctx.cuda:
                torch.cuda.empty_cache()
    finally:
        bar.close()
    return records, measurements, 0


def print_report(module, records: list[dict], measurements: list) -> None:
    variant = getattr(module, "SUMMARY_VARIANT", "auto")
    print(report.compare_table(measurements))
    print(report.aligned(records, getattr(module, "COLUMNS", []), getattr(module, "LAYOUT", "records"),
                         variant or "auto"))
    for line in report.not_run_lines(records):
        print(f"not timed: {line}")
    for line in report.summary_lines(records, variant):
        print(line)


def save(module, records: list[dict], sections: dict, meta: dict, args, wall_s: float,
         cut: int = 0) -> None:
    """The suite's results document (and its PNG with --plot); ``cut``: the cases
    --deadline-s left unrun, named in the document's meta as ``cases_cut``."""
    suite_meta = {**meta, "suite": module.NAME, "timing": getattr(module, "TIMING", meta["timing"]),
                  "quick": args.quick, "rep_ms": rep_ms_of(args), "cross_check": cross_check_of(args),
                  "wall_s": round(wall_s, 1)}
    if cut:
        suite_meta["cases_cut"] = cut
    path = args.out / results.file_name(module.NAME, meta["gpu_slug"], args.quick)
    doc = results.document(module.NAME, suite_meta, records, sections)
    print(f"wrote {results.write(path, doc)}", file=sys.stderr)
    if args.plot:
        drawn = plot.draw(doc, path.with_suffix(".png"))
        print(f"wrote {drawn}" if drawn else "no plot: matplotlib is missing", file=sys.stderr)
        if hasattr(module, "RATIO_CHART"):
            drawn = plot.draw_ratio(doc, plot.ratio_chart_path(path), *module.RATIO_CHART)
            if drawn:
                print(f"wrote {drawn}", file=sys.stderr)


def run_suite(module, todo: list, ctx: Context, meta: dict, args) -> list[dict]:
    """Run one suite's cases, print its tables and save its results: its records."""
    print(f"\n== {module.NAME}: {module.TITLE} ({len(todo)} cases)", flush=True)
    started = time.monotonic()
    records, measurements, cut = time_cases(todo, ctx, meta, args)
    if cut:
        print(f"{module.NAME}: --deadline-s {args.deadline_s:g} passed, {cut} of {len(todo)} "
              "cases not run", flush=True)
    if hasattr(module, "finish"):
        module.finish(records)
    sections = module.sections(ctx) if hasattr(module, "sections") else {}
    print_report(module, records, measurements)
    wall_s = time.monotonic() - started
    print(f"{module.NAME} took {wall_s:.0f} s", flush=True)
    if not args.no_save:
        save(module, records, sections, meta, args, wall_s, cut)
    return records


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.started = time.monotonic()
    if args.list:
        print(parser.epilog.split("\n\n")[0])
        return 0
    if args.rep_ms is not None and args.rep_ms <= 0:
        parser.error(f"--rep-ms must be positive, got {args.rep_ms:g}")
    if args.deadline_s is not None and args.deadline_s <= 0:
        parser.error(f"--deadline-s must be positive, got {args.deadline_s:g}")
    if args.pad_us is not None and not 0 <= args.pad_us <= timing.MAX_PAD_US:
        parser.error(f"--pad-us must be in [0, {timing.MAX_PAD_US:g}], got {args.pad_us:g}")
    names = choose_suites(parser, args.suites)
    device = choose_device(parser, args.device)
    ctx = make_context(parser, args, device)
    wanted = shape_filter(parser, args.shape)
    if device.type == "cuda":
        torch.cuda.set_device(device)  # the Timer synchronizes the current device
    try:
        planned = plan(names, ctx, wanted)
    except ValueError as exc:
        parser.error(str(exc))
    meta = environment.describe(device)
    print(f"{PROG}: {environment.opening_line(meta)}", flush=True)
    meta["copy_gbps"] = timing.copy_gbps(device)
    meta["launch_floor_us"] = timing.launch_floor_us(device)
    meta["argv"] = list(sys.argv[1:] if argv is None else argv)
    flushed = ("L2 flushed (256 MiB zeroed)" if args.flush == "write" else
               "L2 flushed deep (256 MiB zeroed, then zeroed again with evict_last)")
    meta["timing"] = (f"median of per-call CUDA-event times, {flushed} before "
                      "each call, the GPU kept behind the host by twice the call's launch time"
                      + (f" and at least {args.pad_us:g} µs" if args.pad_us is not None else "")
                      if device.type == "cuda" else "median of perf_counter per call")
    meta["flush"] = args.flush if device.type == "cuda" else "none"
    if meta["copy_gbps"]:
        print(f"{PROG}: device-to-device copy {meta['copy_gbps']:,.0f} GB/s (read + written): "
              "the bandwidth ceiling of % copy", flush=True)
    summaries, wrong = [], False
    for name, todo in planned.items():
        if isinstance(todo, str):
            print(f"\n== {name}: not run here: {todo}", flush=True)
            continue
        records = run_suite(SUITES[name], todo, ctx, meta, args)
        variant = getattr(SUITES[name], "SUMMARY_VARIANT", "auto")
        summaries.append(f"{name}: {report.summary_line(records, variant)}")
        wrong = wrong or any(r["status"] == "wrong" for r in records)
    print()
    for line in summaries:
        print(line)
    return 1 if wrong else 0

