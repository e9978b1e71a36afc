"""The results files: one JSON document per suite and machine,
``benchmarks/results/<suite>_<gpu>.json`` (``<suite>_<gpu>_quick.json`` for a --quick
run, so a quick look never overwrites the figures the README shows)::

    {"suite": name, "meta": environment + run settings, "records": [record.Record...],
     "sections": {suite-specific tables, e.g. the kernels' resources}}

Written strictly: every non-finite float becomes None (JSON has no inf or NaN, and a
run must not lose its results to one odd figure at the end).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

DEFAULT_DIR = Path("benchmarks") / "results"


def json_safe(value):
    """``value`` with every non-finite float replaced by None, through dicts, lists and
    tuples."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    return value


def file_name(suite: str, gpu_slug: str, quick: bool) -> str:
    return f"{suite}_{gpu_slug}{'_quick' if quick else ''}.json"


def document(suite: str, meta: dict, records: list, sections: dict | None = None) -> dict:
    return json_safe({"suite": suite, "meta": meta,
                      "records": [r if isinstance(r, dict) else r.as_dict() for r in records],
                      "sections": sections or {}})


def write(path: Path, doc: dict) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False, allow_nan=False) + "\n")
    return path


def finish_sweep(out: str | Path | None, meta: dict, fields: dict, wrong: list[str]) -> int:
    """The end of a tuning sweep (benchmarks/tune): each config found wrong printed, the
    document ``{"meta": meta, **fields, "wrong": wrong}`` written to ``out`` where given,
    and the exit status, 1 where any config was wrong."""
    for line in wrong:
        print("WRONG:", line)
    if out:
        write(Path(out), json_safe({"meta": meta, **fields, "wrong": wrong}))
    return 1 if wrong else 0


def read(path: Path) -> dict:
    return json.loads(Path(path).read_text())
