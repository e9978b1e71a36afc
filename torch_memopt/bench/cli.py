"""The command line of ``python -m torch_memopt.bench``: arguments, then a plan of
cases, then the run, then the report. ``main(argv)`` runs in-process for the tests.

Every choice is checked before anything is timed, so a typo in ``--variant`` costs
an error message, not minutes of timing followed by a crash.
"""
from __future__ import annotations

import argparse
import sys

import torch

import torch_memopt

from . import cases, report, shapes
from .progress import ProgressBar
from .runner import Case, run_case

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
DTYPE_ALIASES = {"fp32": "float32", "fp16": "float16", "half": "float16", "bf16": "bfloat16"}

# Seconds each timing runs at least, by --quick. 0.5 s still gives two blocks for the
# slowest naive CUDA call (an fp32 4096^3 gemm, about 0.3 s) and hundreds of calls for
# the rest; 0.1 s keeps a CUDA --quick run over every op and dtype within a minute
# (24 s on an H200 with cuBLAS-speed kernels standing in for ours).
DEFAULT_MIN_RUN_TIME = {False: 0.5, True: 0.1}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m torch_memopt.bench",
        description=(
            "Time each torch_memopt op against the stock PyTorch op on the same inputs "
            "with torch.utils.benchmark, and report medians, TFLOP/s or GB/s and "
            "speedup_vs_stock = stock time / ours (> 1: ours is faster)."
        ),
        epilog=(
            "Peers: gemm torch.mm (cuBLAS, TF32 off), linear F.linear, layer_norm "
            "F.layer_norm, rms_norm F.rms_norm, softmax torch.softmax. On CUDA each call "
            "reads the next of several input sets, together over twice the L2 size, so "
            "neither side is timed from cache. Without a GPU the CPU reference kernels "
            "are timed on tiny shapes."
        ),
    )
    parser.add_argument(
        "--op", action="append", metavar="OP",
        help=f"op to time: {', '.join(shapes.OPS)}; repeatable or comma-separated (default: all)",
    )
    parser.add_argument(
        "--dtype", action="append", metavar="DTYPE",
        help=f"{', '.join(DTYPES)} (or fp32, fp16, bf16); repeatable or comma-separated "
        "(default: all three)",
    )
    parser.add_argument(
        "--variant", action="append", metavar="NAME",
        help="variant of ours to time, from torch_memopt.variants(op, device), or 'all' "
        "for every one; repeatable or comma-separated (default: auto)",
    )
    parser.add_argument(
        "--device", metavar="DEVICE",
        help="cpu, cuda or cuda:N (default: cuda if available, else cpu)",
    )
    parser.add_argument(
        "--quick", action="store_true",
        help=f"fewer, smaller shapes and --min-run-time {DEFAULT_MIN_RUN_TIME[True]:g}",
    )
    parser.add_argument(
        "--min-run-time", type=float, metavar="SECONDS",
        help="least time spent timing each call, in seconds "
        f"(default: {DEFAULT_MIN_RUN_TIME[False]:g}; with --quick {DEFAULT_MIN_RUN_TIME[True]:g})",
    )
    parser.add_argument("--out", metavar="PATH", help="also write the results as JSON to PATH")
    return parser


def _listed(values: list[str] | None) -> list[str]:
    """Flatten repeated and comma-separated values, in order, without duplicates."""
    names = [name.strip() for value in values or [] for name in value.split(",")]
    return list(dict.fromkeys(name for name in names if name))


def _choose_ops(parser: argparse.ArgumentParser, given: list[str] | None) -> list[str]:
    ops = _listed(given) or list(shapes.OPS)
    for op in ops:
        if op not in shapes.OPS:
            parser.error(f"--op {op!r} is not a benchmarked op; choose from {', '.join(shapes.OPS)}")
    return ops


def _choose_dtypes(parser: argparse.ArgumentParser, given: list[str] | None) -> list[torch.dtype]:
    names = [DTYPE_ALIASES.get(name, name) for name in _listed(given)] or list(DTYPES)
    for name in names:
        if name not in DTYPES:
            parser.error(f"--dtype {name!r} is not supported; choose from {', '.join(DTYPES)}")
    return [DTYPES[name] for name in dict.fromkeys(names)]


def _choose_device(parser: argparse.ArgumentParser, given: str | None) -> torch.device:
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


def _choose_variants(
    parser: argparse.ArgumentParser, ops: list[str], given: list[str] | None, device: torch.device
) -> dict[str, tuple[str, ...]]:
    """Per op, the variants to time: each named one must run on ``device``."""
    requested = _listed(given) or ["auto"]
    chosen = {}
    for op in ops:
        available = list(torch_memopt.variants(op, device))
        if not available:
            parser.error(
                f"this torch_memopt build cannot run {op} on {device.type}: "
                f"torch_memopt.variants({op!r}, {device.type!r}) is empty"
            )
        if "all" in requested:
            chosen[op] = tuple(available)
            continue
        for name in requested:
            if name not in available:
                parser.error(
                    f"--variant {name!r} is not a {op} variant on {device.type}; "
                    f"torch_memopt.variants({op!r}, {device.type!r}) lists "
                    f"{', '.join(available)} (or give 'all', or narrow --op)"
                )
        chosen[op] = tuple(requested)
    return chosen


def plan(
    ops: list[str],
    dtypes: list[torch.dtype],
    variants: dict[str, tuple[str, ...]],
    device: torch.device,
    quick: bool,
) -> list[Case]:
    return [
        Case(op, dtype, shape, variants[op])
        for op in ops
        for dtype in dtypes
        for shape in shapes.default_shapes(op, device.type, quick)
    ]


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    ops = _choose_ops(parser, args.op)
    dtypes = _choose_dtypes(parser, args.dtype)
    device = _choose_device(parser, args.device)
    variants = _choose_variants(parser, ops, args.variant, device)
    min_run_time = args.min_run_time
    if min_run_time is None:
        min_run_time = DEFAULT_MIN_RUN_TIME[args.quick]
    elif min_run_time <= 0:
        parser.error(f"--min-run-time must be positive, got {min_run_time:g}")
    if device.type == "cuda":
        # The Timer synchronizes the current device; make it the one we time.
        torch.cuda.set_device(device)

    meta = report.environment(device, quick=args.quick, min_run_time=min_run_time)
    print(report.opening_line(meta), flush=True)
    print(report.method_line(meta), flush=True)

    todo = plan(ops, dtypes, variants, device, args.quick)
    progress = ProgressBar(total=sum(1 + len(case.variants) for case in todo))
    measurements, results = [], []
    try:
        with cases.fp32_matmul_without_tf32():
            for case in todo:
                case_measurements, case_results = run_case(
                    case, device,
                    min_run_time=min_run_time,
                    l2_bytes=meta["l2_bytes"] or 0,
                    before_each_timer=progress.step,
                )
                measurements += case_measurements
                results += case_results
    finally:
        progress.close()

    print()
    print(report.compare_table(measurements))
    print(report.summary_table(results), flush=True)
    report.warn_disagreements(results)
    if args.out:
        report.write_json(args.out, meta, results)
        print(f"{report.PROG}: wrote {args.out}", file=sys.stderr)
    return 0
