"""The probe's JSON: the run's conditions, one record per claim, the raw series (what
the plots draw) and the seconds each probe took."""
from __future__ import annotations

import datetime
import math


def _clean(value):
    """JSON has no NaN or inf: they become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def document(rows: list[dict], series: dict, seconds: dict, quick: bool) -> dict:
    import torch

    import torch_memopt

    props = torch.cuda.get_device_properties(0)
    meta = {"gpu": props.name, "capability": f"{props.major}.{props.minor}",
            "sm_count": props.multi_processor_count, "torch": torch.__version__,
            "cuda": torch.version.cuda, "torch_memopt": torch_memopt.__version__,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "quick": quick}
    return _clean({"meta": meta, "rows": rows, "series": series, "seconds": seconds})
