"""Two norm grids of one op timed on one machine (ab_csrc_session.sh: the baseline's build and
the change's, one after the other), compared row count by row count: the geomean of
new / base time (< 1: the change is faster), its range, each against its own in-process
peers, and how far the peers drifted between the two processes (what the timing alone moved).

    python benchmarks/tune/ab_compare.py BASE.json NEW.json [--width 4096]
"""
from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict


def records(path: str) -> dict:
    with open(path) as f:
        data = json.load(f)
    return {(r["shape"]["rows"], r["shape"]["N"]): r for r in data["records"]
            if r["status"] == "ok"}


def geomean(values) -> float:
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values))


def peer_time(record: dict) -> float:
    return min(record["peers"].values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base")
    parser.add_argument("new")
    parser.add_argument("--width", type=int, default=4096, help="print this width's cases too")
    args = parser.parse_args()
    base, new = records(args.base), records(args.new)
    by_rows = defaultdict(list)
    for key in sorted(base.keys() & new.keys()):
        b, n = base[key], new[key]
        by_rows[key[0]].append((n["ours_us"] / b["ours_us"], b["ratio"], n["ratio"],
                                peer_time(n) / peer_time(b)))
        if key[1] == args.width:
            print(f"{key[0]:6d} x {key[1]}: base {b['ours_us']:.2f} us, new {n['ours_us']:.2f}, "
                  f"best peer {peer_time(b):.2f} / {peer_time(n):.2f}")
    print(f"{'rows':>6}  new/base  (min - max)      x best peer: base   new   peer drift")
    for rows, cases in sorted(by_rows.items()):
        times = [c[0] for c in cases]
        print(f"{rows:6d}  {geomean(times):8.3f}  ({min(times):.3f} - {max(times):.3f})"
              f"   {geomean(c[1] for c in cases):14.3f} {geomean(c[2] for c in cases):5.3f}"
              f"   {geomean(c[3] for c in cases):.3f}")


if __name__ == "__main__":
    main()
