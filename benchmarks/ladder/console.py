"""The report printed at the end of a ladder run: the tables of ``tables``, aligned."""
from __future__ import annotations

from typing import Callable

from . import tables
from .rungs import CUBLAS, Size


def aligned(table: tables.Table) -> str:
    """Fixed-width columns: the first left-aligned, the others right-aligned."""
    headers, rows = table
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows)]

    def line(cells: list[str]) -> str:
        first, *rest = cells
        return "  ".join([f"{first:<{widths[0]}}"] + [f"{c:>{w}}" for c, w in zip(rest, widths[1:])])

    return "\n".join([line(headers), "  ".join("-" * w for w in widths)] + [line(r) for r in rows])


def report(document: dict, out: Callable[[str], None] = print) -> None:
    meta = document.get("meta") or {}
    if document.get("results"):
        out(f"\nFP32 GEMM ladder on {meta.get('gpu')}: {meta.get('timing')}")
        for size in tables.sizes_of(document):
            cublas = next((r for r in document["results"]
                           if r["variant"] == CUBLAS and Size(**r["shape"]) == size), None)
            rate = "" if not cublas or cublas["tflops"] is None \
                else f": cuBLAS {cublas['tflops']:.1f} TFLOP/s"
            out(f"\n{tables.size_label(size)} ({size}){rate}")
            out(aligned(tables.size_table(document, size)))
        out("\nTFLOP/s per rung; × naive beside the published ladder's claim")
        out(aligned(tables.ladder_table(document)))
    resources = tables.resources_table(document)
    if resources is not None:
        section = document["resources"]
        out(f"\nResources per kernel ({section['source']}, {section['arch']})")
        out(aligned(resources))
    profiled = tables.ncu_table(document)
    if profiled is not None:
        section = document["ncu"]
        out(f"\nNsight Compute at {tables.size_label(Size(**section['size']))} ({section.get('tool')})")
        out(aligned(profiled))
