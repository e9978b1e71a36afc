"""The report printed at the end of the norm / softmax run, made from its records alone:
one table for the bandwidth rows (GB/s, % of copy), one for the decode rows (µs),
each row ours (``auto``) beside the peers with the target and PASS / MISS.

The verdict of a row is ``auto``'s, the variant users get; the other variants are in
the JSON and the progress lines (and in ``benchmarks/plot_norm.py``'s chart). No figure
is ever shown for a wrong result. ``markdown`` is the same tables for the README
(``benchmarks/readme_tables.py``).
"""
from __future__ import annotations

import math
from typing import Callable

from tc_gemm.report import (Table, acceptance_counts, aligned, not_run_lines, number, percent,
                            ratio_cell, result_cell, value_cell)

from .cases import AUTO, COMPILE, DTYPES, EAGER, LIGER, Case, Target

BANDWIDTH_HEADERS = ["op", "dtype", "shape", "MB moved", "copy GB/s", "eager GB/s", "compile GB/s",
                     "Liger GB/s", "auto GB/s", "auto % copy", "auto × best peer", "target", "result"]
DECODE_HEADERS = ["op", "dtype", "shape", "eager µs", "compile µs", "Liger µs", "auto µs",
                  "auto × eager", "target", "result"]
# Issue 5's acceptance: over the bandwidth shapes, auto's geometric-mean speed-up over eager.
EAGER_GEOMEAN_TARGET = 1.3


def case_of(record: dict) -> Case:
    return Case(record["op"], record["shape"]["rows"], record["shape"]["N"], record["group"])


def _groups(records: list[dict]) -> dict[tuple[str, Case], dict[str, dict]]:
    """(dtype, case) -> {call name: record}, in the order the run measured them."""
    groups: dict[tuple[str, Case], dict[str, dict]] = {}
    for record in records:
        groups.setdefault((record["dtype"], case_of(record)), {})[record["variant"]] = record
    return groups


def _target_cell(case: Case, dtype: str, auto: dict | None) -> str:
    target = Target.from_dict(auto["target"]) if auto and auto["target"] else case.target(dtype)
    return target.describe()


def bandwidth_table(records: list[dict], copy_gbps: float | None) -> Table:
    rows = []
    for (dtype, case), by_name in _groups(records).items():
        if case.decode:
            continue
        auto = by_name.get(AUTO)
        rows.append([
            case.op, dtype, case.shape_label(),
            number(case.moved_bytes(dtype) / 1e6),
            number(copy_gbps),
            *[value_cell(by_name.get(peer), "gbps", number) for peer in (EAGER, COMPILE, LIGER)],
            value_cell(auto, "gbps", number),
            value_cell(auto, "pct_copy", percent),
            ratio_cell(auto),
            _target_cell(case, dtype, auto),
            result_cell(auto),
        ])
    return list(BANDWIDTH_HEADERS), rows


def decode_table(records: list[dict]) -> Table:
    rows = []
    for (dtype, case), by_name in _groups(records).items():
        if not case.decode:
            continue
        auto = by_name.get(AUTO)
        rows.append([
            case.op, dtype, case.shape_label(),
            *[value_cell(by_name.get(name), "us", number) for name in (EAGER, COMPILE, LIGER, AUTO)],
            ratio_cell(auto),
            _target_cell(case, dtype, auto),
            result_cell(auto),
        ])
    return list(DECODE_HEADERS), rows


def _geomean(ratios: list[float]) -> float:
    """The mean of speed-ups that is fair to ratios: 0.5× and 2× average to 1×, not 1.25×."""
    return math.exp(sum(math.log(r) for r in ratios) / len(ratios))


def eager_geomean(records: list[dict]) -> dict:
    """``auto``'s geometric-mean speed-up over eager (eager_ms / ms) on the bandwidth rows,
    overall and per dtype, with the row count: the figure issue 5's acceptance names, which
    no single row shows. Rows without both times, or with a wrong result, are left out
    (no figure for a wrong result); {} when none is left."""
    ratios: dict[str, list[float]] = {}
    for r in records:
        if (r["group"] == "bandwidth" and r["variant"] == AUTO and r["status"] == "ok"
                and r.get("correct") is not False and (r.get("ms") or 0) > 0
                and (r.get("eager_ms") or 0) > 0):
            ratios.setdefault(r["dtype"], []).append(r["eager_ms"] / r["ms"])
    every = [ratio for by_dtype in ratios.values() for ratio in by_dtype]
    if not every:
        return {}
    return {"all": _geomean(every), **{dtype: _geomean(rs) for dtype, rs in ratios.items()},
            "count": len(every)}


def eager_geomean_line(records: list[dict]) -> str | None:
    """The geomean against its target in one sentence, shared by the printed report and
    the README; None when there is nothing to average (e.g. a run without eager times)."""
    geomean = eager_geomean(records)
    if not geomean:
        return None
    per_dtype = ", ".join(f"{dtype} {geomean[dtype]:.2f}×" for dtype in DTYPES if dtype in geomean)
    verdict = "PASS" if geomean["all"] >= EAGER_GEOMEAN_TARGET else "MISS"
    return (f"geomean over eager ({AUTO}, {geomean['count']} bandwidth shapes): "
            f"{geomean['all']:.2f}× ({per_dtype}); target ≥ {EAGER_GEOMEAN_TARGET}×: {verdict}")


def report(document: dict, out: Callable[[str], None] = print) -> None:
    meta, copy, records = document.get("meta") or {}, document.get("copy") or {}, document["records"]
    out(f"\nNorms and softmax against eager and torch.compile on {meta.get('gpu')} "
        f"(torch {meta.get('torch')}, CUDA {meta.get('cuda')}): {meta.get('timing')}")
    if copy.get("gbps"):
        out(f"device-to-device copy of {copy['bytes'] / 2 ** 30:g} GiB: {copy['gbps']:,.0f} GB/s "
            "(bytes read + written); GB/s = (input + output + weight/bias bytes) / time")
    for line in not_run_lines(records):
        out(f"not measured: {line}")
    for record in records:
        if record["correct"] is False:
            out(f"WRONG: {record['variant']} {record['dtype']} {case_of(record)}: {record['reason']}")
    bandwidth, decode = bandwidth_table(records, copy.get("gbps")), decode_table(records)
    if bandwidth[1]:
        out("\nbandwidth rows: × = the faster of eager and torch.compile, time / auto's; "
            "result = auto against the target")
        out(aligned(bandwidth))
    if decode[1]:
        out("\ndecode rows, latency after an L2 flush: × = eager time / auto's")
        out(aligned(decode))
    counts = acceptance_counts(records)
    out("acceptance (auto): " + ", ".join(f"{n} {name}" for name, n in counts.items()))
    geomean = eager_geomean_line(records)
    if geomean:
        out(geomean)


def _without(table: Table, header: str) -> Table:
    """``table`` less the column named ``header``."""
    headers, rows = table
    keep = [i for i, name in enumerate(headers) if name != header]
    return [headers[i] for i in keep], [[row[i] for i in keep] for row in rows]


def _pipe(table: Table) -> str:
    """A markdown table, aligned as ``aligned`` does: op, dtype, shape left, figures right."""
    headers, rows = table
    align = ["---"] * 3 + ["---:"] * (len(headers) - 3)
    return "\n".join(["| " + " | ".join(headers) + " |", "|" + "|".join(align) + "|",
                      *("| " + " | ".join(str(c) for c in row) + " |" for row in rows)])


def markdown(document: dict, chart: str | None = None) -> str:
    """The README's section: the run's conditions, the bandwidth and decode tables, the
    chart (``chart``: the PNG's path relative to the README) and the tally."""
    meta, copy, records = document.get("meta") or {}, document.get("copy") or {}, document["records"]
    bandwidth, decode = bandwidth_table(records, copy.get("gbps")), decode_table(records)
    liger_ran = any(r["variant"] == LIGER and r["status"] == "ok" for r in records)
    if not liger_ran:  # a column of "skip" says nothing; the sentence below says why
        bandwidth, decode = _without(bandwidth, "Liger GB/s"), _without(decode, "Liger µs")
    bandwidth[0][2] = decode[0][2] = "rows×N"
    ceiling = f"{copy['gbps']:,.0f} GB/s" if copy.get("gbps") else "not measured"
    liger = "" if liger_ran else f" Liger-Kernel not measured: {(meta.get('peers') or {}).get('liger')}."
    parts = [
        f"{meta.get('gpu')}, torch {meta.get('torch')}, CUDA {meta.get('cuda')}, "
        f"{str(meta.get('date'))[:10]}; {meta.get('timing')}. Bytes moved = {meta.get('bytes')}; "
        f"GB/s = bytes / median time. Copy ceiling in the same run (device-to-device, read + "
        f"written): {ceiling}.{liger}",
    ]
    if bandwidth[1]:
        parts += ["Bandwidth rows: auto × best peer = the faster of eager and torch.compile, "
                  "its time / auto's; the result is `auto`'s against the target.", _pipe(bandwidth)]
    if decode[1]:
        parts += ["Decode rows, latency after an L2 flush: auto × eager = eager time / auto's.",
                  _pipe(decode)]
    if chart:
        parts.append(f"![Norms and softmax: GB/s against N, every variant, eager, torch.compile "
                     f"and the copy ceiling]({chart})")
    counts = acceptance_counts(records)
    tally = "Acceptance (`auto`): " + ", ".join(f"{n} {k}" for k, n in counts.items() if n) + "."
    geomean = eager_geomean_line(records)
    parts.append(f"{tally} {geomean[0].upper()}{geomean[1:]}." if geomean else tally)
    return "\n\n".join(parts)
