"""Two runs of one benchmark suite on one machine (ab_csrc_session.sh: the baseline's build
and the change's, one after the other), compared by op and the shape's first dimension (a
norm grid's rows, a GEMM's M): the geomean of new / base time (< 1: the change is faster), its
range, each against its own in-process best peer, and how far that peer drifted between the
two processes (what the timing alone moved). An op no peer has (add_layer_norm: Liger has no
fused add + LayerNorm) prints "-" there: compare it with a dtype the change leaves alone.

    python benchmarks/tune/ab_compare.py BASE.json NEW.json [--show N=4096]
"""
from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict


def records(path: str) -> dict:
    with open(path) as f:
        data = json.load(f)
    return {(r["op"], r["dtype"], r.get("variant"), tuple(r["shape"].items())): r
            for r in data["records"] if r["status"] == "ok" and r["ours_us"]}


def geomean(values) -> float:
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values))


def case_order(key: tuple) -> tuple:
    """op, dtype, variant, then the shape's values as numbers (rows 8 before 64)."""
    return key[0], key[1], str(key[2]), tuple(value for _, value in key[3])


def peer_time(record: dict) -> float | None:
    # A peer that cannot run a case (Liger's softmax past 65536 columns) is None there.
    times = [t for t in record["peers"].values() if t]
    return min(times) if times else None


def geomean_or_dash(values, width: int) -> str:
    values = [v for v in values if v]
    return f"{geomean(values):{width}.3f}" if values else f"{'-':>{width}s}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base")
    parser.add_argument("new")
    parser.add_argument("--show", default="N=4096",
                        help="also print each case whose shape has this KEY=VALUE")
    args = parser.parse_args()
    show_key, show_value = args.show.split("=")
    base, new = records(args.base), records(args.new)
    groups = defaultdict(list)
    for key in sorted(base.keys() & new.keys(), key=case_order):
        b, n = base[key], new[key]
        shape = dict(key[3])
        first = next(iter(shape.items()))
        peer_b, peer_n = peer_time(b), peer_time(n)
        drift = peer_n / peer_b if peer_b and peer_n else None
        groups[(key[0], key[1], first)].append(
            (n["ours_us"] / b["ours_us"], b["ratio"], n["ratio"], drift))
        if str(shape.get(show_key)) == show_value:
            peers = f", best peer {peer_b:.2f} / {peer_n:.2f}" if drift else ""
            print(f"{key[0]} {key[1]} {shape}: base {b['ours_us']:.2f} us, "
                  f"new {n['ours_us']:.2f}{peers}")
    print(f"{'op, dtype, first dimension':40s} new/base  (min - max)   x best peer: base   new"
          f"   peer drift")
    for (op, dtype, (dim, value)), cases in sorted(groups.items()):
        times = [c[0] for c in cases]
        print(f"{f'{op} {dtype} {dim}={value}':40s} {geomean(times):8.3f}"
              f"  ({min(times):.3f} - {max(times):.3f})"
              f"   {geomean_or_dash((c[1] for c in cases), 11)}"
              f" {geomean_or_dash((c[2] for c in cases), 5)}"
              f"   {geomean_or_dash((c[3] for c in cases), 5)}")


if __name__ == "__main__":
    main()
