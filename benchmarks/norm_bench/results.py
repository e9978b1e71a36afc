"""The results JSON of the norm / softmax run: {meta, copy, records}, written strictly
(no NaN or Infinity, which JSON does not have: ``ladder.json_safe``).
"""
from __future__ import annotations

import json
from pathlib import Path

from ladder.json_safe import json_safe


def document(meta: dict, copy: dict | None, records: list[dict]) -> dict:
    return json_safe({"meta": meta, "copy": copy, "records": records})


def write(path: Path, doc: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
