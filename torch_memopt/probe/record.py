"""The probe's JSON: the run's conditions (the benchmarks' environment), one record per
claim, the raw series (what the plots draw) and the seconds each probe took."""
from __future__ import annotations

import torch

from torch_memopt.bench.environment import describe
from torch_memopt.bench.results import json_safe


def document(rows: list[dict], series: dict, seconds: dict, quick: bool) -> dict:
    meta = {**describe(torch.device("cuda", torch.cuda.current_device())), "quick": quick}
    return json_safe({"meta": meta, "rows": rows, "series": series, "seconds": seconds})
