"""Where a latency-bound norm row's time goes (issue 17): at 1-512 rows of 4096 bf16 our
rms_norm took ~5.5-7 us where Triton's (torch.compile, Liger) took ~4.4-6, kernel times by
the harness's timer. Timed in one process on the same inputs, L2 flushed:

- the floor: an empty kernel (torch.cuda._sleep(0)) and a one-pass elementwise kernel
  over the same rows (x.neg()), what any launch and one read + write cost;
- ours with the weight and without it (weight=None): the difference is what the
  weight's load costs on the critical path; and ours with the weight fetched early
  (``early``: staged in shared memory as the row loads, or, in the peeled kernel that
  cannot stage, prefetched towards L2) and read after the row's reductions (``read
  late``), forced either way (``ours`` is the default: early where the grid is half a
  wave at most; the column was ``staged`` before the L2 prefetch), and prefetched
  towards L2 everywhere, staging nothing (``prefetched``);
- at a width off the 16-byte pack (``--width 2050``, 4100: rows the peeled kernel takes),
  ours with the peel off (``narrow packs``: the 4- or 8-byte pack kernel, which stages);
- Liger's and torch.compile's rms_norm, which load weight and row together.

``--flush none``: the same without the L2 flush; against the flushed run, how much of a
call's time is its code and data coming back from HBM (ours against the peers').
``--evict-code``: after each flush, 128 KB of other code on every SM (probe 9's
``code_fetch_evict``), so that each call's code comes from HBM too, not the SMs' caches.

``--ncu``: no timing; each call warmed, then run three times inside cudaProfilerStart/Stop,
for ``ncu --profile-from-start off --metrics gpu__time_duration.sum ...`` (the kernel's own
duration, launch path excluded, and where its warps stall).

``--op layer_norm``: the same for layer_norm (weight and bias; "no weight": neither).

    python benchmarks/tune/norm_latency_probe.py [--op rms_norm|layer_norm] [--width 4096]
        [--rows 1 8 ...] [--flush write|read|none]
        [--evict-code] [--pad-us 200] [--out probe.json] [--ncu]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import torch
import torch.nn.functional as F

import torch_memopt
from torch_memopt.bench import calls, peers, results
from torch_memopt.bench.environment import describe
from torch_memopt.bench.timing import FLUSHES, KernelTimer
from torch_memopt.testing.switches import EARLY, LATE, NARROW_PACKS, PREFETCH, norm_switches

ROWS = (1, 8, 64, 512, 4096)
EPS = 1e-6


def switched(call, **switches):
    """``call()`` under torch_memopt.testing.switches.norm_switches(**switches)."""
    with norm_switches(**switches):
        return call()


def calls_for(rows: int, N: int, peer_names=("liger", "compile"), op: str = "rms_norm") -> dict:
    torch.manual_seed(rows)
    options = {"eps": EPS}
    x, shape, w, *bias = calls.make_inputs(op, calls.rows_shape(rows, N), torch.bfloat16, "cuda",
                                           options)
    norm = getattr(torch_memopt, op)
    no_bias = [None] * len(bias)  # layer_norm's bias goes with its weight
    ours = lambda: norm(x, shape, w, *bias, EPS)  # noqa: E731
    out = {
        "empty kernel": lambda: torch.cuda._sleep(0),
        "x.neg()": lambda: x.neg(),
        "ours": ours,
        "ours, no weight": lambda: norm(x, shape, None, *no_bias, EPS),
        "ours, early": lambda: switched(ours, param_stage=EARLY),
        "ours, prefetched": lambda: switched(ours, param_stage=PREFETCH),
        "ours, read late": lambda: switched(ours, param_stage=LATE),
    }
    if N % 8 != 0:  # off bf16's 16-byte pack
        out["ours, narrow packs"] = lambda: switched(ours, peel=NARROW_PACKS)
    for name, call in peers.runnable(peer_names, op, options, torch.device("cuda")).items():
        out[name] = lambda call=call: call(x, shape, w, *bias)
    stock = getattr(F, op)
    ref = stock(x.double(), shape, w.double(), *(b.double() for b in bias), eps=EPS)
    for name in [k for k in out if k.startswith("ours") and k != "ours, no weight"]:
        err = (out[name]().double() - ref).norm() / ref.norm()
        if not err < 1e-2:
            raise SystemExit(f"{name} at {rows} x {N}: relative error {err:.2e}")
    return out


def profile_under_ncu(call_sets: list[dict]) -> None:
    """Each call of each set run twice untimed (torch.compile's autotuning among them),
    then three times between cudaProfilerStart and Stop: under ``ncu --profile-from-start
    off`` only those are profiled, not the compiler's autotuning launches (profiling them
    ran the last attempt past 150 s)."""
    for calls in call_sets:
        for call in calls.values():
            for _ in range(2):
                call()
    torch.cuda.synchronize()
    cudart = torch.cuda.cudart()
    cudart.cudaProfilerStart()
    for calls in call_sets:
        for call in calls.values():
            for _ in range(3):
                call()
    torch.cuda.synchronize()
    cudart.cudaProfilerStop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=4096, help="row length N (default 4096)")
    parser.add_argument("--op", choices=("rms_norm", "layer_norm"), default="rms_norm",
                        help="the norm probed (default rms_norm; layer_norm: weight and bias)")
    parser.add_argument("--rows", type=int, nargs="*", default=list(ROWS),
                        help=f"row counts (default {' '.join(map(str, ROWS))})")
    parser.add_argument("--out", default=None)
    parser.add_argument("--ncu", action="store_true",
                        help="warm each call, then run it 3 times untimed inside "
                             "cudaProfilerStart/Stop")
    parser.add_argument("--peers", nargs="*", default=["liger", "compile"],
                        help="peers to time beside ours (default: liger compile)")
    parser.add_argument("--evict-code", action="store_true",
                        help="also evict the SMs' instruction caches before each call")
    parser.add_argument("--flush", choices=FLUSHES, default="write",
                        help="the kernel timer's L2 flush before each call (default write; "
                             "none: code and inputs stay where the last call left them)")
    parser.add_argument("--pad-us", type=float, default=None,
                        help="idle the GPU at least this long before every call, ours and the "
                             "peers alike (default: twice each call's own enqueue time)")
    args = parser.parse_args()
    before = None
    if args.evict_code:
        sink = torch.empty(4 * 128 * torch.cuda.get_device_properties(0).multi_processor_count,
                           device="cuda")
        before = lambda: torch.ops.memopt_probe.code_fetch_evict(sink)  # noqa: E731
    timer = KernelTimer(torch.device("cuda"), flush=args.flush, before=before, pad_us=args.pad_us)
    records = []
    if args.ncu:
        profile_under_ncu([calls_for(rows, args.width, args.peers, args.op) for rows in args.rows])
        return
    for rows in args.rows:
        calls = calls_for(rows, args.width, args.peers, args.op)
        us = {name: timer.time(call).median_us for name, call in calls.items()}
        records.append({"op": args.op, "rows": rows, "N": args.width, "flush": args.flush,
                        "code_evicted": args.evict_code, "pad_us": args.pad_us, "us": us})
        print(f"{rows:>5} x {args.width}: " + "  ".join(f"{k} {v:.2f}" for k, v in us.items()), flush=True)
    if args.out and records:
        results.write(Path(args.out), results.json_safe({"meta": describe(torch.device("cuda")),
                                                          "records": records}))


if __name__ == "__main__":
    main()
