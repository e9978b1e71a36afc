"""What the tuning scripts under benchmarks/tune share about their records: GB/s from a
case's bytes, the outputs past tolerance, the JSON they write (the GPU and versions beside
the records) and their closing line and exit status."""
from __future__ import annotations

import json
from typing import Optional

import torch


def gbps(us: dict[str, float], nbytes: float) -> dict[str, float]:
    """GB/s of each timed call of one case, from its µs and the bytes it moves."""
    return {name: nbytes / (t * 1e-6) / 1e9 for name, t in us.items()}


def past_tolerance(record: dict, tolerance: float) -> int:
    """How many of a record's outputs (``rel_err``, one a call) missed ``tolerance``."""
    return sum(not err < tolerance for err in record["rel_err"].values())


def write(path: Optional[str], records: list[dict], **extra) -> None:
    """The records as JSON at ``path`` (nothing where None), with the GPU, torch's and our
    versions, and ``extra`` (the copy ceiling, ...)."""
    if not path:
        return
    import torch_memopt

    with open(path, "w") as f:
        json.dump({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                   "memopt": torch_memopt.__version__, **extra, "records": records}, f, indent=1)


def finish(bad: int) -> int:
    """The closing line, and the exit status: 1 where any output missed tolerance."""
    print(f"{bad} outputs past tolerance" if bad else "all outputs within tolerance")
    return 1 if bad else 0
