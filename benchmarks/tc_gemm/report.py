"""The report printed at the end of an acceptance run, made from its records alone:
one row per (dtype, shape), ours beside cuBLAS, the target and PASS / MISS.

The verdict of a row is that of ``auto``, the variant users get; the rungs' ratios sit
beside it for reading. A row whose ``auto`` gave a wrong result reads WRONG, and no
ratio is ever shown for a wrong result.
"""
from __future__ import annotations

from typing import Callable

from .cases import AUTO, CUBLAS, HALF_RUNGS, Case, Target

DASH = "—"
Table = tuple[list[str], list[list[str]]]
HEADERS = ["dtype", "shape", "layout", "cuBLAS TFLOP/s", "auto TFLOP/s", "auto ×", "auto × Timer",
           *[f"{rung} ×" for rung in HALF_RUNGS], "weight GB/s", "% copy", "% copy, clean L2",
           "target", "result"]


def number(value: float | None) -> str:
    """Three significant figures, whole numbers from 100 up."""
    if value is None:
        return DASH
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def times(value: float | None) -> str:
    return DASH if value is None else f"{value:.2f}×"


def percent(value: float | None) -> str:
    # One decimal: 79.96 % must not print as the 80 % a target asks for.
    return DASH if value is None else f"{value:.1f}%"


def case_of(record: dict) -> Case:
    shape = record["shape"]
    return Case(record["group"], record["layout"], shape["M"], shape["N"], shape["K"], record["bias"])


def _groups(records: list[dict]) -> dict[tuple[str, Case], dict[str, dict]]:
    """(dtype, case) -> {variant: record}, in the order the run measured them."""
    groups: dict[tuple[str, Case], dict[str, dict]] = {}
    for record in records:
        groups.setdefault((record["dtype"], case_of(record)), {})[record["variant"]] = record
    return groups


def status_cell(record: dict | None) -> str | None:
    """The cell of a record with no figure to show, or None when it has one."""
    if record is None:
        return DASH
    if record["status"] == "skipped":
        return "skip"
    if record["status"] == "error":
        return "error"
    if record["correct"] is False:
        return "WRONG"
    return None


def ratio_cell(record: dict | None, key: str = "ratio") -> str:
    cell = status_cell(record)
    return cell if cell is not None else times(record[key])


def value_cell(record: dict | None, key: str, fmt: Callable[[float | None], str]) -> str:
    cell = status_cell(record)
    return cell if cell is not None else fmt(record.get(key))


def result_cell(record: dict | None) -> str:
    cell = status_cell(record)
    if cell is not None:
        return cell
    return record["verdict"] or DASH


def summary_table(records: list[dict]) -> Table:
    rows = []
    for (dtype, case), by_variant in _groups(records).items():
        cublas, auto = by_variant.get(CUBLAS), by_variant.get(AUTO)
        target = Target.from_dict(auto["target"]) if auto and auto["target"] else case.target
        rows.append([
            dtype,
            case.shape_label(),
            case.layout_label(),
            value_cell(cublas, "tflops", number),
            value_cell(auto, "tflops", number),
            ratio_cell(auto),
            ratio_cell(auto, "ratio_timer"),
            *[ratio_cell(by_variant[rung]) if rung in by_variant else DASH for rung in HALF_RUNGS],
            value_cell(auto, "weight_gbps", number) if case.skinny else DASH,
            value_cell(auto, "pct_copy", percent) if case.skinny else DASH,
            value_cell(auto, "pct_copy_clean_l2", percent) if case.skinny else DASH,
            target.describe(),
            result_cell(auto),
        ])
    return list(HEADERS), rows


def acceptance_counts(records: list[dict]) -> dict[str, int]:
    """How the ``auto`` rows fared: PASS, MISS, WRONG, and not measured (skipped, error, no ratio)."""
    counts = {"PASS": 0, "MISS": 0, "WRONG": 0, "not measured": 0}
    for record in records:
        if record["variant"] != AUTO:
            continue
        verdict = record["verdict"] if record["status"] == "ok" else None
        counts[verdict if verdict in counts else "not measured"] += 1
    return counts


def not_run_lines(records: list[dict]) -> list[str]:
    """One line per distinct (variant, status, reason) that was skipped or raised."""
    seen = []
    for record in records:
        if record["status"] in ("skipped", "error"):
            line = f"{record['variant']} {record['status']}: {record['reason']}"
            if line not in seen:
                seen.append(line)
    return seen


def aligned(table: Table) -> str:
    """Fixed-width columns: the first three left-aligned, the others right-aligned."""
    headers, rows = table
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows)]

    def line(cells: list[str]) -> str:
        return "  ".join(f"{c:<{w}}" if i < 3 else f"{c:>{w}}"
                         for i, (c, w) in enumerate(zip(cells, widths)))

    return "\n".join([line(headers), "  ".join("-" * w for w in widths)] + [line(r) for r in rows])


def markdown(document: dict) -> str:
    """The README's table: the run's conditions, the summary table, the tally."""
    meta = document["meta"]
    headers, rows = summary_table(document["records"])
    counts = acceptance_counts(document["records"])
    lines = [
        f"{meta['gpu']}, torch {meta['torch']}, CUDA {meta['cuda']}, {meta['date'][:10]}; "
        f"{meta['timing']}. Copy ceiling in the same run: {document['copy']['gbps']:,.0f} GB/s. "
        "× = cuBLAS time / ours; the verdict is `auto`'s against the issue's target.",
        "",
        "| " + " | ".join(headers) + " |",
        "|" + "|".join(["---"] * 3 + ["---:"] * (len(headers) - 3)) + "|",
        *("| " + " | ".join(str(c) for c in row) + " |" for row in rows),
        "",
        "Acceptance (`auto`): " + ", ".join(f"{n} {k}" for k, n in counts.items() if n) + ".",
    ]
    return "\n".join(lines)


def report(document: dict, out: Callable[[str], None] = print) -> None:
    meta, copy, records = document.get("meta") or {}, document.get("copy") or {}, document["records"]
    out(f"\nTensor-core GEMM against cuBLAS on {meta.get('gpu')} "
        f"(torch {meta.get('torch')}, CUDA {meta.get('cuda')}): {meta.get('timing')}")
    if copy.get("gbps"):
        out(f"device-to-device copy of {copy['bytes'] / 2 ** 30:g} GiB: {copy['gbps']:,.0f} GB/s "
            "(bytes read + written); % copy = weight bytes 2·N·K / time against it")
    for line in not_run_lines(records):
        out(f"not measured: {line}")
    wrong = [r for r in records if r["correct"] is False]
    for record in wrong:
        out(f"WRONG: {record['variant']} {record['dtype']} {case_of(record)}: {record['reason']}")
    out("\n× = cuBLAS time / ours (do_bench medians; 'auto × Timer': Timer.blocked_autorange); "
        "result = auto against the target")
    out(aligned(summary_table(records)))
    counts = acceptance_counts(records)
    out("acceptance (auto): " + ", ".join(f"{n} {name}" for name, n in counts.items()))
