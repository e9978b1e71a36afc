"""What the tuning scripts under benchmarks/tune share about their records: one norm or
softmax case timed under several settings of its switches, GB/s from a case's bytes, the
outputs past tolerance, the JSON they write (the GPU and versions beside the records) and
their closing line and exit status."""
from __future__ import annotations

import json
from typing import Optional

import torch

import torch_memopt
from torch_memopt.bench import calls, peers
from torch_memopt.bench.timing import kernel_ms
from torch_memopt.testing.switches import switches_of


def switched_record(op: str, dtype: torch.dtype, rows: int, n: int,
                    launches: dict[str, dict], peer_names=("liger",),
                    device: str = "cuda") -> dict:
    """One norm or softmax case (``rows`` x ``n``) timed and checked against float64 under
    each of ``launches`` (a name -> the settings of ``switches_of(op)``), the peers timed
    beside it, on the same inputs: µs and GB/s by name, errors by launch."""
    options: dict = {}
    shape = calls.rows_shape(rows, n)
    inputs = calls.make_inputs(op, shape, dtype, device, options)
    ref = calls.reference(op, inputs, options)
    ours = calls.ours(op, "auto", options)
    record = {"op": op, "dtype": calls.dtype_name(dtype), "rows": rows, "N": n, "us": {},
              "rel_err": {}}
    switches_for_op = switches_of(op)
    for name, switches in launches.items():
        with switches_for_op(**switches):
            record["rel_err"][name] = calls.relative_error(ours(*inputs), ref)
            record["us"][name] = kernel_ms(lambda: ours(*inputs), device) * 1e3
    for name, call in peers.runnable(peer_names, op, options, torch.device(device)).items():
        record["us"][name] = kernel_ms(lambda: call(*inputs), device) * 1e3
    _, nbytes = calls.work(op, shape, dtype, options)
    record["gbps"] = gbps(record["us"], nbytes)
    return record


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
    with open(path, "w") as f:
        json.dump({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                   "memopt": torch_memopt.__version__, **extra, "records": records}, f, indent=1)


def finish(bad: int) -> int:
    """The closing line, and the exit status: 1 where any output missed tolerance."""
    print(f"{bad} outputs past tolerance" if bad else "all outputs within tolerance")
    return 1 if bad else 0
