"""The one renderer of results: the Compare table, the records table (console and
markdown) and the summary lines, made from records alone, so a run's console output and
the generated docs read alike. Plots are in ``plot``.

The records table has a column per peer, ``× best`` = the fastest peer's time / ours
(> 1: ours is faster), the rate (TFLOP/s from 2·M·N·K, GB/s from the bytes formula) and,
where the run measured the copy ceiling, % of it. A suite adds its own columns
(``COLUMNS`` in its module). No figure is ever shown for a wrong result.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from torch.utils.benchmark import Compare, Measurement
from torch.utils.benchmark.utils.common import TaskSpec

from .calls import shape_text
from .record import summarize

DASH = "—"
STATUS_CELL = {"wrong": "WRONG", "error": "error", "skipped": "skip"}


@dataclass(frozen=True)
class Column:
    header: str
    cell: Callable[[dict], str]
    numeric: bool = True


def number(value: float | None) -> str:
    """Three significant figures, whole numbers with separators from 1000."""
    if value is None:
        return DASH
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.1e}"


def times(value: float | None) -> str:
    return DASH if value is None else f"{value:.2f}×"


def percent(value: float | None) -> str:
    # One decimal: 89.96% must not print as the 90% a target asks for.
    return DASH if value is None else f"{value:.1f}%"


def case_text(record: dict) -> str:
    return shape_text(record["shape"])


def _ours_cell(record: dict) -> str:
    if record["status"] != "ok":
        return STATUS_CELL.get(record["status"], record["status"])
    return number(record["ours_us"])


def _peer_names(records: Sequence[dict]) -> list[str]:
    return list(dict.fromkeys(name for r in records for name in r["peers"]))


def _varies(records: Sequence[dict], key: str, default) -> bool:
    return any(r.get(key) != default for r in records)


def columns(records: Sequence[dict], extra: Sequence[Column] = ()) -> list[Column]:
    """The records table's columns: the case, ours, each peer, the ratio and rates; the
    label and variant columns only where they say something."""
    cols = [Column("op", lambda r: r["op"], False), Column("dtype", lambda r: r["dtype"], False)]
    if _varies(records, "label", ""):
        cols.append(Column("case", lambda r: r["label"] or DASH, False))
    cols.append(Column("shape", case_text, False))
    if _varies(records, "variant", "auto"):
        cols.append(Column("variant", lambda r: r["variant"], False))
    cols.append(Column("ours µs", _ours_cell))
    for peer in _peer_names(records):
        cols.append(Column(f"{peer} µs", lambda r, p=peer: number(r["peers"].get(p))))
    cols.append(Column("× best", lambda r: times(r["ratio"]) if r["status"] == "ok" else DASH))
    if any(r.get("check") for r in records):
        cols.append(Column("× best (Timer)", lambda r: times((r.get("check") or {}).get("ratio"))))
    if any(r.get("tflops") for r in records):
        cols.append(Column("TFLOP/s", lambda r: number(r.get("tflops"))))
    if any(r.get("gbps") and not r.get("flop") for r in records):
        cols.append(Column("GB/s", lambda r: DASH if r.get("flop") else number(r.get("gbps"))))
    if any(r.get("pct_copy") and not r.get("flop") for r in records):
        cols.append(Column("% copy", lambda r: DASH if r.get("flop") else percent(r.get("pct_copy"))))
    return cols + list(extra)


def _rows_table(records: Sequence[dict], extra: Sequence[Column]) -> tuple[list[Column], list[list[str]]]:
    cols = columns(records, extra)
    return cols, [[col.cell(r) for col in cols] for r in records]


def _case_key(record: dict) -> tuple:
    return (record["op"], record["dtype"], record["label"], case_text(record))


def _cases_table(records: Sequence[dict], main: str, extra: Sequence[Column]
                 ) -> tuple[list[Column], list[list[str]]]:
    """One row per case: each peer's and each variant's µs side by side, then the ratio,
    rates and suite columns of the ``main`` variant's record (the case's first without it)."""
    groups: dict[tuple, dict[str, dict]] = {}
    for r in records:
        groups.setdefault(_case_key(r), {})[r["variant"]] = r
    variants = list(dict.fromkeys(r["variant"] for r in records))
    mains = [group.get(main) or next(iter(group.values())) for group in groups.values()]
    every = [c for c in columns(mains, extra) if c.header not in ("variant", "ours µs")]
    lead = [c for c in every if not c.numeric]
    peer_cols = [c for c in every if c.numeric and c.header.endswith(" µs")]
    rest = [Column(f"{c.header} ({main})" if c.header.startswith("× best") else c.header, c.cell)
            for c in every if c.numeric and c not in peer_cols]
    variant_cols = [Column(f"{v} µs", lambda r, v=v: DASH) for v in variants]
    rows = []
    for group, first in zip(groups.values(), mains):
        rows.append([c.cell(first) for c in lead + peer_cols]
                    + [_ours_cell(group[v]) if v in group else DASH for v in variants]
                    + [c.cell(first) for c in rest])
    return lead + peer_cols + variant_cols + rest, rows


def table(records: Sequence[dict], extra: Sequence[Column] = (), layout: str = "records",
          main: str = "auto") -> tuple[list[Column], list[list[str]]]:
    """(columns, rows): a row per record (``layout="records"``) or per case (``"cases"``)."""
    if layout == "cases":
        return _cases_table(records, main, extra)
    return _rows_table(records, extra)


def aligned(records: Sequence[dict], extra: Sequence[Column] = (), layout: str = "records",
            main: str = "auto") -> str:
    """The table for a console: text left-aligned, figures right-aligned."""
    cols, rows = table(records, extra, layout, main)
    widths = [max([len(c.header)] + [len(row[i]) for row in rows]) for i, c in enumerate(cols)]

    def line(cells) -> str:
        return "  ".join(cell.rjust(w) if col.numeric else cell.ljust(w)
                         for cell, w, col in zip(cells, widths, cols)).rstrip()

    return "\n".join([line([c.header for c in cols]), line(["-" * w for w in widths]),
                      *(line(row) for row in rows)])


def markdown(records: Sequence[dict], extra: Sequence[Column] = (), layout: str = "records",
             main: str = "auto") -> str:
    """The same table as a pipe table."""
    cols, rows = table(records, extra, layout, main)
    escape = lambda text: str(text).replace("|", "\\|")  # noqa: E731
    lines = ["| " + " | ".join(c.header for c in cols) + " |",
             "|" + "|".join("---:" if c.numeric else "---" for c in cols) + "|"]
    lines += ["| " + " | ".join(escape(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def _worst_text(record: dict) -> str:
    where = f"{record['label']} " if record["label"] else ""
    return f"{times(record['ratio'])} at {where}{record['dtype']} {case_text(record)} vs {record['best_peer']}"


def summary_lines(records: Sequence[dict], variant: str | None = "auto") -> list[str]:
    """One line per op: the geometric mean and the worst of ours ÷ best peer (speed)."""
    return [f"{s.op}: {times(s.geomean)} geomean over {s.count} cases, worst {_worst_text(s.worst)}"
            for s in summarize(list(records), variant)]


def summary_line(records: Sequence[dict], variant: str | None = "auto") -> str:
    """The last line of a run: every op's geomean and worst ratio, ours ÷ best peer."""
    parts = [f"{s.op} {times(s.geomean)} (worst {times(s.worst['ratio'])})"
             for s in summarize(list(records), variant)]
    who = f"{variant} " if variant else ""
    return f"ours ({who}speed) ÷ best peer, geomean (worst): " + (", ".join(parts) or "nothing timed")


def not_run_lines(records: Sequence[dict]) -> list[str]:
    """One line per distinct reason a variant or peer has no time."""
    seen = []
    for r in records:
        if r["status"] != "ok":
            seen.append(f"{r['variant']} {r['status']}: {r['reason']}")
        seen += [f"{peer}: {why}" for peer, why in r["notes"].items()]
    return list(dict.fromkeys(seen))


def measurement(label: str, sub_label: str, description: str, samples_us: Sequence[float]) -> Measurement:
    """A torch.utils.benchmark Measurement of already-taken samples, for ``Compare``."""
    spec = TaskSpec(stmt=description, setup="", label=label, sub_label=sub_label,
                    description=description, num_threads=1)
    return Measurement(number_per_run=1, raw_times=[s * 1e-6 for s in samples_us], task_spec=spec)


def compare_table(measurements: Sequence[Measurement]) -> str:
    """torch.utils.benchmark's own table: one block per op and dtype, a row per case,
    a column per implementation."""
    if not measurements:
        return ""
    compare = Compare(list(measurements))
    compare.trim_significant_figures()
    return str(compare)
