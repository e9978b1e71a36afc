"""The fused residual add + norm (issue 5) on one GPU: ``torch_memopt.add_rms_norm`` /
``add_layer_norm`` against the two stock calls they replace (``s = x + r`` then
``F.rms_norm(s)`` / ``F.layer_norm(s)``), eager and under torch.compile, same inputs.

    python benchmarks/add_norm_bench.py [--out benchmarks/results/add_norm_h200.json]

The fused op reads x and r and writes the sum and the normalized output: 4 accesses an
element. Eager moves 5 (the add reads 2 and writes 1, the norm reads 1 and writes 1), so
at equal GB/s the fused op takes 4/5 of eager's time (1.25×). torch.compile fuses the pair
itself and is the peer to beat. Each call is checked against the float64 pair (relative
Frobenius error: 1e-5 fp32, 1e-2 bf16), then timed as norm_bench.py times (do_bench
medians, L2 flushed). GB/s counts 4 accesses an element for every call (the work, not
what each implementation moves). JSON: meta and one record per (op, dtype, shape, call).
Exit 2 without a GPU.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

from ladder import run_meta
from ladder.json_safe import json_safe
from norm_bench.backend import CudaBackend

HERE = Path(__file__).resolve().parent
SHAPES = ((8192, 4096), (16384, 4096), (4096, 8192), (32768, 1024))
DTYPES = (torch.float32, torch.bfloat16)
TOLERANCE = {torch.float32: 1e-5, torch.bfloat16: 1e-2}
EPS = 1e-5


def stock_pair(op: str):
    """The two stock calls the fused op replaces: (normalized, sum)."""
    def pair(x, r, w):
        s = x + r
        if op == "add_rms_norm":
            return F.rms_norm(s, x.shape[-1:], w, EPS), s
        return F.layer_norm(s, x.shape[-1:], w, None, EPS), s
    return pair


def fused(op: str):
    import torch_memopt

    if op == "add_rms_norm":
        return lambda x, r, w: torch_memopt.add_rms_norm(x, r, [x.shape[-1]], w, EPS)
    return lambda x, r, w: torch_memopt.add_layer_norm(x, r, [x.shape[-1]], w, None, EPS)


def calls(op: str) -> dict:
    """The three calls at one case. ``torch._dynamo.reset()`` first: every case compiles
    the same ``pair`` code object, and past dynamo's recompile limit (8) torch.compile
    silently runs it eagerly (the first run's add_layer_norm rows: compile = eager)."""
    torch._dynamo.reset()
    return {"fused": fused(op), "eager": stock_pair(op),
            "compile": torch.compile(stock_pair(op), dynamic=False)}


def rel_error(out: torch.Tensor, ref: torch.Tensor) -> float:
    return ((out.double() - ref).norm() / ref.norm()).item()


def measure(op: str, dtype: torch.dtype, rows: int, n: int, backend: CudaBackend) -> list[dict]:
    x = torch.randn(rows, n, device="cuda", dtype=dtype)
    r = torch.randn(rows, n, device="cuda", dtype=dtype)
    w = torch.randn(n, device="cuda", dtype=dtype)
    s_ref = (x + r).double()  # the sum rounded to dtype, as every call computes it
    ref = (F.rms_norm(s_ref, (n,), w.double(), EPS) if op == "add_rms_norm"
           else F.layer_norm(s_ref, (n,), w.double(), None, EPS))
    moved = 4 * rows * n * x.element_size() + n * w.element_size()
    records = []
    for name, fn in calls(op).items():
        out, total = fn(x, r, w)
        err = max(rel_error(out, ref), rel_error(total, s_ref))
        record = {"op": op, "dtype": str(dtype)[6:], "rows": rows, "n": n, "call": name,
                  "rel_err": err, "correct": err < TOLERANCE[dtype], "bytes": moved}
        if record["correct"]:
            def call(fn=fn):
                return fn(x, r, w)
            record["ms"], record["method"] = backend.time(call, backend.probe_ms(call))
            record["gbps"] = moved / (record["ms"] * 1e-3) / 1e9
        records.append(record)
    return records


def rows_of(records: list[dict]) -> list[tuple]:
    """(op, dtype, rows×N, fused µs, eager µs, compile µs, × eager, × compile, fused GB/s)
    per case: what the console table and the README table both show."""
    keyed = {(r["op"], r["dtype"], r["rows"], r["n"], r["call"]): r for r in records}
    out = []
    for op, dtype, rows, n in dict.fromkeys((r["op"], r["dtype"], r["rows"], r["n"]) for r in records):
        us = {c: (keyed[(op, dtype, rows, n, c)].get("ms") or math.nan) * 1e3
              for c in ("fused", "eager", "compile")}
        gbps = keyed[(op, dtype, rows, n, "fused")].get("gbps") or math.nan
        out.append((op, dtype, f"{rows}×{n}", us["fused"], us["eager"], us["compile"],
                    us["eager"] / us["fused"], us["compile"] / us["fused"], gbps))
    return out


def table(records: list[dict]) -> list[str]:
    """One line per (op, dtype, shape): the three times and fused's ratio to each peer."""
    lines = [f"{'op':15s}{'dtype':10s}{'rows×N':>13s}{'fused µs':>10s}{'eager µs':>10s}"
             f"{'compile µs':>12s}{'× eager':>9s}{'× compile':>11s}{'fused GB/s':>12s}"]
    for op, dtype, shape, fused_us, eager_us, compile_us, x_eager, x_compile, gbps in rows_of(records):
        lines.append(f"{op:15s}{dtype:10s}{shape:>13s}{fused_us:10.1f}{eager_us:10.1f}"
                     f"{compile_us:12.1f}{x_eager:8.2f}×{x_compile:10.2f}×{gbps:12,.0f}")
    return lines


def markdown(document: dict) -> str:
    """The README's table: the run's conditions, then one row per case."""
    meta = document["meta"]
    lines = [f"{meta['gpu']}, torch {meta['torch']}, CUDA {meta['cuda']}, {meta['date'][:10]}; "
             "do_bench medians, L2 flushed; GB/s counts 4 accesses an element.", "",
             "| op | dtype | rows×N | fused µs | eager µs | compile µs | fused × eager | "
             "fused × compile | fused GB/s |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    for op, dtype, shape, fused_us, eager_us, compile_us, x_eager, x_compile, gbps in rows_of(
            document["records"]):
        lines.append(f"| {op} | {dtype} | {shape} | {fused_us:.1f} | {eager_us:.1f} | "
                     f"{compile_us:.1f} | {x_eager:.2f}× | {x_compile:.2f}× | {gbps:,.0f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "results" / "add_norm_h200.json")
    parser.add_argument("--rep-ms", type=float, default=100.0)
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("add_norm_bench.py needs a CUDA GPU")
        return 2
    torch.manual_seed(0)
    backend = CudaBackend(rep_ms=args.rep_ms)
    records = []
    with torch.inference_mode():
        for op in ("add_rms_norm", "add_layer_norm"):
            for dtype in DTYPES:
                for rows, n in SHAPES:
                    records += measure(op, dtype, rows, n, backend)
    lines = table(records)
    print("\n".join(lines))
    wrong = [r for r in records if not r["correct"]]
    for r in wrong:
        print(f"WRONG: {r['op']} {r['dtype']} {r['rows']}×{r['n']} {r['call']}: error {r['rel_err']:.2e}")
    document = {"meta": run_meta.environment(True, 0), "records": records}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(json_safe(document), indent=1) + "\n")
    print(f"wrote {args.out}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
