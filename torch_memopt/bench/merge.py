"""One results document from several runs of the same suite on the same GPU model and
commit, e.g. issue 17's grid timed as ``--dtype bf16`` and ``--dtype fp32`` in two calls
of the GPU machine, whose 600 s limit the whole grid (~560 s of timing) does not fit:

    python -m torch_memopt.bench.merge benchmarks/results/norm-grid_h200.json \\
        bf16/norm-grid_h200.json fp32/norm-grid_h200.json --plot

Each record keeps what its own run measured, its ``pct_copy`` included (against that
run's copy ceiling); the peers of a record ran in its process, on its inputs. The merged
``meta`` is the first part's, with ``parts`` listing every run (argv, date, wall time,
copy ceiling, launch floor), ``wall_s`` their sum, the latest date, and the mean of the
parts' copy ceilings and launch floors (they differ by ~0.5% between machines; the chart's
ceiling line and the digest's bound use the mean). Parts that disagree on the suite, GPU,
torch, CUDA, commit or --quick, or that time one case twice, are refused.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import plot
from .results import document, read, write

SAME = ("gpu", "torch", "cuda", "git", "quick", "built_with_cuda")
PART_FIELDS = ("argv", "date", "wall_s", "copy_gbps", "launch_floor_us", "rep_ms", "cross_check")
AVERAGED = ("copy_gbps", "launch_floor_us")


class MergeError(ValueError):
    pass


def record_key(record: dict) -> tuple:
    shape = tuple(sorted(record["shape"].items()))
    return (record["op"], record["dtype"], shape, record["variant"], record.get("label") or "")


def _mean(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def merge(docs: list[dict]) -> dict:
    """The documents as one; MergeError where they are not runs of one suite, GPU model,
    software and commit, or where two time the same case."""
    if len(docs) < 2:
        raise MergeError(f"merge needs at least 2 documents, got {len(docs)}")
    first = docs[0]
    for doc in docs[1:]:
        if doc["suite"] != first["suite"]:
            raise MergeError(f"suites differ: {first['suite']!r} and {doc['suite']!r}")
        for field in SAME:
            if doc["meta"].get(field) != first["meta"].get(field):
                raise MergeError(f"meta.{field} differs: {first['meta'].get(field)!r} and "
                                 f"{doc['meta'].get(field)!r}")
    seen: dict[tuple, int] = {}
    records = []
    for index, doc in enumerate(docs):
        for record in doc["records"]:
            key = record_key(record)
            if key in seen:
                raise MergeError(f"case {key} is in part {seen[key]} and part {index}")
            seen[key] = index
            records.append(record)
    sections: dict = {}
    for doc in docs:
        for name, value in doc.get("sections", {}).items():
            if name in sections and sections[name] != value:
                raise MergeError(f"sections.{name} differs between the parts")
            sections[name] = value
    metas = [doc["meta"] for doc in docs]
    meta = {**first["meta"],
            "parts": [{field: m.get(field) for field in PART_FIELDS} for m in metas],
            "date": max(m["date"] for m in metas),
            "wall_s": round(sum(m.get("wall_s") or 0.0 for m in metas), 1)}
    for field in AVERAGED:
        meta[field] = _mean([m.get(field) for m in metas])
    meta.pop("argv", None)
    return document(first["suite"], meta, records, sections)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m torch_memopt.bench.merge",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the merged document")
    parser.add_argument("parts", type=Path, nargs="+", help="the runs' documents, in order")
    parser.add_argument("--plot", action="store_true", help="also draw its PNG beside it")
    args = parser.parse_args(argv)
    try:
        doc = merge([read(path) for path in args.parts])
    except MergeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {write(args.out, doc)}: {len(doc['records'])} records from {len(args.parts)} runs")
    if args.plot:
        drawn = plot.draw(doc, args.out.with_suffix(".png"))
        print(f"wrote {drawn}" if drawn else "no plot: matplotlib is missing")
    return 0


if __name__ == "__main__":
    sys.exit(main())
