"""The probe's JSON: the run's conditions, one record per claim, the raw series (what
the plots draw) and the seconds each probe took."""
from __future__ import annotations

import datetime

from torch_memopt._json_safe import json_safe


def document(rows: list[dict], series: dict, seconds: dict, quick: bool) -> dict:
    import torch

    import torch_memopt

    props = torch.cuda.get_device_properties(0)
    meta = {"gpu": props.name, "capability": f"{props.major}.{props.minor}",
            "sm_count": props.multi_processor_count, "torch": torch.__version__,
            "cuda": torch.version.cuda, "torch_memopt": torch_memopt.__version__,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "quick": quick}
    return json_safe({"meta": meta, "rows": rows, "series": series, "seconds": seconds})
