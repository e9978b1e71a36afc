"""Where a latency-bound norm row's time goes (issue 17): at 1-512 rows of 4096 bf16 our
rms_norm took ~5.5-7 us where Triton's (torch.compile, Liger) took ~4.4-6, kernel times by
the harness's timer. Timed in one process on the same inputs, L2 flushed:

- the floor: an empty kernel (torch.cuda._sleep(0)) and a one-pass elementwise kernel
  over the same rows (x.neg()), what any launch and one read + write cost;
- ours with the weight and without it (weight=None): the difference is what the
  weight's load costs on the critical path; and ours with the weight staged in shared
  memory as the row loads (``staged``) and read after the row's reductions (``read
  late``), forced either way (``ours`` is the default: staged where the grid is one
  block an SM at most);
- Liger's and torch.compile's rms_norm, which load weight and row together.

``--ncu``: no timing, each call a few times, for ``ncu --metrics gpu__time_duration.sum``
(the kernel's own duration, launch path excluded).

    python benchmarks/tune/norm_latency_probe.py [--out probe.json] [--ncu]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import torch
import torch.nn.functional as F

import torch_memopt
from torch_memopt import _C
from torch_memopt.bench import calls, peers, results
from torch_memopt.bench.environment import describe
from torch_memopt.bench.timing import kernel_ms

ROWS = (1, 8, 64, 512, 4096)
N = 4096
EPS = 1e-6


def with_param_stage(on: bool, call):
    """``call`` with the norm's parameters staged in shared memory as the row loads
    (``on``, where the launcher's rule allows) or read after its reductions."""
    previous = _C._set_norm_param_stage(on)
    try:
        return call()
    finally:
        _C._set_norm_param_stage(previous)


def calls_for(rows: int, peer_names=("liger", "compile")) -> dict:
    torch.manual_seed(rows)
    options = {"eps": EPS}
    x, shape, w = calls.make_inputs("rms_norm", calls.rows_shape(rows, N), torch.bfloat16,
                                    "cuda", options)
    out = {
        "empty kernel": lambda: torch.cuda._sleep(0),
        "x.neg()": lambda: x.neg(),
        "ours": lambda: torch_memopt.rms_norm(x, shape, w, EPS),
        "ours, no weight": lambda: torch_memopt.rms_norm(x, shape, None, EPS),
        "ours, staged": lambda: with_param_stage(
            True, lambda: torch_memopt.rms_norm(x, shape, w, EPS)),
        "ours, read late": lambda: with_param_stage(
            False, lambda: torch_memopt.rms_norm(x, shape, w, EPS)),
    }
    for name in peer_names:
        if peers.serves(name, "rms_norm", torch.device("cuda")):
            try:
                call = peers.build(name, "rms_norm", options, torch.device("cuda"))
            except peers.Unavailable:
                continue
            out[name] = lambda call=call: call(x, shape, w)
    ref = F.rms_norm(x.double(), shape, w.double(), EPS)
    err = (out["ours"]().double() - ref).norm() / ref.norm()
    if not err < 1e-2:
        raise SystemExit(f"ours at {rows} x {N}: relative error {err:.2e}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None)
    parser.add_argument("--ncu", action="store_true", help="run each call 3 times, untimed")
    parser.add_argument("--peers", nargs="*", default=["liger", "compile"],
                        help="peers to time beside ours (default: liger compile)")
    args = parser.parse_args()
    records = []
    for rows in ROWS:
        calls = calls_for(rows, args.peers)
        if args.ncu:
            for name, call in calls.items():
                for _ in range(3):
                    call()
            torch.cuda.synchronize()
            continue
        us = {name: kernel_ms(call) * 1e3 for name, call in calls.items()}
        records.append({"rows": rows, "N": N, "us": us})
        print(f"{rows:>5} x {N}: " + "  ".join(f"{k} {v:.2f}" for k, v in us.items()), flush=True)
    if args.out and records:
        results.write(Path(args.out), results.json_safe({"meta": describe(torch.device("cuda")),
                                                          "records": records}))


if __name__ == "__main__":
    main()
