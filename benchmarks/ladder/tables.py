"""The ladder's tables as (headers, rows) of strings, made from the results document;
``console`` prints them aligned, ``markdown`` as README pipe tables."""
from __future__ import annotations

from .rungs import AUTO, CUBLAS, LADDER, PUBLISHED_SPEEDUP, Size

DASH = "—"
KEY_SIZE = Size(4096, 4096, 4096)
BIG_SIZE = Size(8192, 8192, 8192)
Table = tuple[list[str], list[list[str]]]


def size_label(size: Size) -> str:
    return f"{size.M}³" if size.M == size.N == size.K else f"{size.M}×{size.N}×{size.K}"


def number(value: float | None, digits: int = 3) -> str:
    """Three significant figures, no exponent for the ranges these tables hold."""
    if value is None:
        return DASH
    if abs(value) >= 10 ** digits:
        return f"{value:,.0f}"
    return f"{value:.{digits}g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.1e}"


def times(value: float | None) -> str:
    return DASH if value is None else f"{value:.1f}×" if value >= 10 else f"{value:.2f}×"


def percent(value: float | None) -> str:
    # One decimal everywhere: 89.75% must not print as the 90% a target asks for.
    return DASH if value is None else f"{value:.1f}%"


def count(value: float | None) -> str:
    return DASH if value is None else f"{value:,.0f}"


def sizes_of(document: dict) -> list[Size]:
    seen = []
    for record in document["results"]:
        size = Size(**record["shape"])
        if size not in seen:
            seen.append(size)
    return seen


def variants_of(document: dict) -> list[str]:
    """cuBLAS first, then the rungs in ladder order, unknown ones, ``auto`` last."""
    present = {r["variant"] for r in document["results"]}
    order = [CUBLAS, *LADDER]
    extras = sorted(present - set(order) - {AUTO})
    return [v for v in order + extras + [AUTO] if v in present]


def _records(document: dict) -> dict[tuple[str, Size], dict]:
    return {(r["variant"], Size(**r["shape"])): r for r in document["results"]}


def variant_label(variant: str) -> str:
    return "cuBLAS (torch.mm, tf32 off)" if variant == CUBLAS else variant


def _rate_cell(record: dict | None) -> str:
    if record is None:
        return DASH
    if record["status"] == "skipped":
        return "skipped"
    if record["status"] == "error":
        return "error"
    mark = " ✗" if record["correct"] is False else ""
    return number(record["tflops"]) + mark


def size_table(document: dict, size: Size) -> Table:
    """Everything measured at one size, one row per variant."""
    records = _records(document)
    headers = ["variant", "ms", "Timer ms", "TFLOP/s", "× naive", "published × naive",
               "% cuBLAS", "rel err", "timing"]
    rows = []
    for variant in variants_of(document):
        record = records.get((variant, size))
        if record is None:
            continue
        if record["status"] != "ok":
            rows.append([variant_label(variant), record["status"], DASH, DASH, DASH,
                         times(record["published_speedup_vs_naive"]), DASH, DASH,
                         record["reason"] or ""])
            continue
        timing = record["method"] + ("" if record["reps"] is None else f" ×{record['reps']}")
        error = record["rel_err_vs_cublas"]
        rows.append([
            variant_label(variant),
            number(record["ms"], 4),
            number(record["timer_ms"], 4),
            _rate_cell(record),
            times(record["speedup_vs_naive"]),
            times(record["published_speedup_vs_naive"]),
            percent(record["pct_cublas"]),
            (DASH if error is None else f"{error:.1e}")
            + (" ✗" if record["correct"] is False else ""),
            timing,
        ])
    return headers, rows


def ladder_table(document: dict) -> Table:
    """Rows = variants; TFLOP/s at every size, × naive and % cuBLAS at the key sizes,
    the published claim, and the worst relative error seen."""
    records = _records(document)
    sizes = sizes_of(document)
    key = KEY_SIZE if KEY_SIZE in sizes else max(sizes, key=lambda s: s.flop)
    pct_sizes = [s for s in (KEY_SIZE, BIG_SIZE) if s in sizes] or [key]
    headers = (
        ["rung"]
        + [f"TFLOP/s {size_label(s)}" for s in sizes]
        + [f"× naive {size_label(key)}", "published × naive"]
        + [f"% cuBLAS {size_label(s)}" for s in pct_sizes]
        + ["max rel err"]
    )
    rows = []
    for variant in variants_of(document):
        mine = [r for (v, _), r in records.items() if v == variant]
        errors = [r["rel_err_vs_cublas"] for r in mine if r["rel_err_vs_cublas"] is not None]
        rows.append(
            [variant_label(variant)]
            + [_rate_cell(records.get((variant, s))) for s in sizes]
            + [times((records.get((variant, key)) or {}).get("speedup_vs_naive")),
               times(PUBLISHED_SPEEDUP.get(variant))]
            + [percent((records.get((variant, s)) or {}).get("pct_cublas")) for s in pct_sizes]
            + [f"{max(errors):.1e}" if errors else DASH]
        )
    return headers, rows


def resources_table(document: dict) -> Table | None:
    """One row per fp32 kernel instantiation of each rung, at the section's chosen arch."""
    section = document.get("resources")
    if not section or not section.get("kernels"):
        return None
    dynamic = _ncu_dynamic_smem(document)
    order = {rung: i for i, rung in enumerate(LADDER)}
    kernels = [k for k in section["kernels"] if k["arch"] == section["arch"]]
    kernels.sort(key=lambda k: (order.get(k["rung"], len(order)), k["rung"], k["template_args"]))
    headers = ["rung", "template args", "registers / thread", "static smem B",
               "dynamic smem B (ncu)", "local B", "stack B", "used by the ladder run"]
    rows = [
        [
            k["rung"],
            ", ".join(k["template_args"]) or DASH,
            count(k["registers"]),
            count(k["shared_static"]),
            count(dynamic.get(k["mangled"])),
            count(k["local"]),
            count(k["stack"]),
            "yes" if k["launched"] else DASH,
        ]
        for k in kernels
    ]
    return headers, rows


def _ncu_dynamic_smem(document: dict) -> dict[str, float]:
    section = document.get("ncu") or {}
    found = {}
    for record in section.get("variants", []):
        for kernel in record.get("kernels", []):
            value = (kernel["metrics"].get("launch__shared_mem_per_block_dynamic") or {}).get("value")
            if value is not None:
                found[kernel["name"]] = value
    return found


def ncu_table(document: dict) -> Table | None:
    """One row per profiled variant: its main kernel's counters."""
    section = document.get("ncu")
    if not section or not section.get("variants"):
        return None
    headers = ["variant", "kernel ms (ncu)", "global ld sectors / request",
               "cp.async sectors / request", "smem bank conflicts (ld / st)",
               "achieved occupancy", "DRAM throughput", "DRAM bytes / compulsory"]
    rows = []
    for record in section["variants"]:
        derived = record.get("derived")
        if record["status"] != "ok" or not derived:
            rows.append([variant_label(record["variant"]), record["status"]] + [DASH] * 5
                        + [record.get("reason") or ""])
            continue
        loads, stores = derived["smem_bank_conflicts_ld"], derived["smem_bank_conflicts_st"]
        split = "" if loads is None and stores is None else f" ({count(loads)} / {count(stores)})"
        rows.append([
            variant_label(record["variant"]),
            number(derived["duration_ms"], 4),
            number(derived["global_ld_sectors_per_request"]),
            number(derived["global_ldgsts_sectors_per_request"]),
            count(derived["smem_bank_conflicts"]) + split,
            percent(derived["achieved_occupancy_pct"]),
            percent(derived["dram_throughput_pct"]),
            times(derived["dram_bytes_over_compulsory"]),
        ])
    return headers, rows
