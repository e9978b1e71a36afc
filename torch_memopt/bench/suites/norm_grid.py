"""Issue 17's acceptance grid: the norms, the fused add + norms and softmax at every width
a model meets, aligned and off the 16-byte pack, from decode rows to full batches,
against eager, torch.compile and Liger-Kernel on the same inputs, bfloat16 and float32 (float16
as well when --dtype names it: outside the issue's grid).

- rms_norm, layer_norm, add_rms_norm, add_layer_norm: N in {768, 1024, 2048, 2050, 3072,
  4096, 4100, 6144, 8192} x rows in {1, 8, 64, 512, 4096, 16384}.
- softmax (last dim): N in {1000, 2048, 32000, 32001, 50257, 128256, 256000} x rows in
  {1, 8, 64, 512, 2048}, and attention rows, B·H·S rows of S for S in {128, 197, 512,
  1024, 2048} with 2^27 elements in all (S = 512: 32 x 16 heads x 512 x 512).

``digest`` states the issue's targets: per op and dtype the geomean and worst of ours ÷
the best peer, the cases that move >= 64 MB under 90% of the run's copy bandwidth (85%
past 65536 columns), and each width off the pack against its aligned neighbour (2050 /
2048, 4100 / 4096, 32001 / 32000: GB/s within 15%). Where the run measured its launch floor
and copy ceiling, also the most any kernel could reach over the best peer: each case's best
peer ÷ (an empty kernel's time + the case's bytes at copy speed), geomean and least. The
floor is generous (it counts no round trip to memory), so that is a bound, not a forecast:
over the bf16 grids of 2026-12-04/05 it was 1.23× for rms_norm and add_rms_norm, under the
issue's 1.25× geomean, and 0.99× at their least. --quick: one aligned and one off-pack
width at 16384 rows a norm, two softmax shapes.
"""
from __future__ import annotations

import torch

from ..calls import rows_shape
from ..case import make_case

NAME = "norm-grid"
TITLE = "norms, fused add + norms and softmax over the width x rows grid"
ABOUT = (
    "Issue 17's grid: rms_norm, layer_norm and the fused add + norms at 9 widths (aligned and "
    "off the 16-byte pack) x 6 row counts, softmax at 7 vocabulary-sized widths x 5 row counts "
    "and at attention rows, against eager, torch.compile and Liger-Kernel on the same inputs, "
    "bfloat16 and float32, with the device-to-device copy as the bandwidth ceiling.")

NORM_OPS = ("rms_norm", "layer_norm", "add_rms_norm", "add_layer_norm")
NORM_WIDTHS = (768, 1024, 2048, 2050, 3072, 4096, 4100, 6144, 8192)
NORM_ROWS = (1, 8, 64, 512, 4096, 16384)
SOFTMAX_WIDTHS = (1000, 2048, 32000, 32001, 50257, 128256, 256000)
SOFTMAX_ROWS = (1, 8, 64, 512, 2048)
ATTENTION_S = (128, 197, 512, 1024, 2048)
ATTENTION_ELEMENTS = 2 ** 27
# The widths off the pack and the aligned neighbour each is judged against.
NEIGHBOURS = {2050: 2048, 4100: 4096, 32001: 32000}
QUICK = {"norm": [(16384, 2048), (16384, 2050)], "softmax": [(8, 50257), (2048, 32001)]}
CPU = {"norm": [(7, 2050), (3, 768)], "softmax": [(5, 1000), (2, 2049)]}
DTYPES = [torch.bfloat16, torch.float32]
# Outside the issue's grid, timed when --dtype names it: the fp16 kernels differ from bf16's
# in their conversions and register caps (an A/B of an fp16-only change needs them).
ON_REQUEST_DTYPES = (torch.float16,)
LAYOUT = "cases"
BIG_BYTES = 64 * 2 ** 20  # cases moving this much are held to the copy-bandwidth target
COPY_TARGET, WIDE_COPY_TARGET, WIDE_COLUMNS = 0.90, 0.85, 65536
NEIGHBOUR_DROP = 0.15


def attention_rows() -> list[tuple[int, int, str]]:
    """(rows, S, label): B·H·S rows of S, B·H = 2^27 / S^2 (rounded down) heads."""
    return [(ATTENTION_ELEMENTS // (s * s) * s, s, f"attention B·H = {ATTENTION_ELEMENTS // (s * s)}")
            for s in ATTENTION_S]


def shapes(op: str, ctx) -> list[tuple[int, int, str]]:
    """(rows, N, label) of op's cases."""
    kind = "softmax" if op == "softmax" else "norm"
    if not ctx.cuda:
        return [(r, n, "") for r, n in CPU[kind]]
    if ctx.quick:
        return [(r, n, "") for r, n in QUICK[kind]]
    if kind == "norm":
        return [(r, n, "") for n in NORM_WIDTHS for r in NORM_ROWS]
    return [(r, n, "") for n in SOFTMAX_WIDTHS for r in SOFTMAX_ROWS] + attention_rows()


def cases(ctx) -> list:
    peers = ctx.pick_peers(["eager", "compile", "liger"])
    out = []
    for dtype in ctx.pick_dtypes(DTYPES, ON_REQUEST_DTYPES):
        for op in (*NORM_OPS, "softmax"):
            if not ctx.wants_op(op):
                continue
            options = {"eps": 1e-5} if op.startswith("add_") else {}
            for rows, n, label in shapes(op, ctx):
                out.append(make_case(NAME, op, dtype, rows_shape(rows, n), device=ctx.device,
                                     variants=ctx.pick_variants(op), peer_names=peers,
                                     options=options, label=label))
    return out


def ceiling(record: dict, launch_floor_us: float, copy_gbps: float) -> float | None:
    """The most a kernel could reach over the case's best peer: that peer's µs over an
    empty kernel's plus the case's bytes at the copy rate (GB/s is bytes a ns)."""
    peers = [us for us in (record.get("peers") or {}).values() if us]
    if not peers or not record.get("bytes"):
        return None
    return min(peers) / (launch_floor_us + record["bytes"] / copy_gbps / 1e3)


def digest(records: list[dict], meta: dict | None = None) -> str:
    """The issue's targets, a row per op and dtype: geomean and worst ours ÷ best peer,
    the big cases under their copy target, and the off-pack widths that fall more than
    15% of GB/s under their aligned neighbour; with the run's launch floor and copy
    ceiling in ``meta``, the ratio no kernel could pass (``ceiling``)."""
    from ..record import geomean

    ok = [r for r in records if r["variant"] == "auto" and r["status"] == "ok"]
    by_key = {(r["op"], r["dtype"], r["shape"]["rows"], r["shape"]["N"]): r for r in ok}
    floor, copy = (meta or {}).get("launch_floor_us"), (meta or {}).get("copy_gbps")
    lines = ["| op | dtype | cases | geomean × best peer | worst (shape) | ≥ 64 MB under the copy "
             "target | off-pack widths > 15% under their neighbour | ceiling: geomean (least) |",
             "|---|---|---:|---:|---|---|---|---:|"]
    for op, dtype in sorted({(r["op"], r["dtype"]) for r in ok}):
        rows = [r for r in ok if (r["op"], r["dtype"]) == (op, dtype) and r.get("ratio")]
        if not rows:
            continue
        worst = min(rows, key=lambda r: r["ratio"])
        slow = [f"{r['shape']['rows']}×{r['shape']['N']} {r['pct_copy']:.0f}%" for r in rows
                if r.get("bytes", 0) >= BIG_BYTES and r.get("pct_copy") is not None
                and r["pct_copy"] / 100 < (WIDE_COPY_TARGET if r["shape"]["N"] > WIDE_COLUMNS
                                           else COPY_TARGET)]
        drops = []
        for r in rows:
            base = by_key.get((op, dtype, r["shape"]["rows"], NEIGHBOURS.get(r["shape"]["N"], -1)))
            if base and base.get("gbps") and r.get("gbps") and r["gbps"] < (1 - NEIGHBOUR_DROP) * base["gbps"]:
                drops.append(f"{r['shape']['rows']}×{r['shape']['N']} {r['gbps'] / base['gbps']:.2f}")
        bounds = [ceiling(r, floor, copy) for r in rows] if floor and copy else []
        bounds = [b for b in bounds if b]
        bound = f"{geomean(bounds):.2f} ({min(bounds):.2f})" if bounds else "—"
        lines.append(f"| {op} | {dtype} | {len(rows)} | {geomean([r['ratio'] for r in rows]):.2f} | "
                     f"{worst['ratio']:.2f} ({worst['shape']['rows']}×{worst['shape']['N']}) | "
                     f"{', '.join(slow) or 'none'} | {', '.join(drops) or 'none'} | {bound} |")
    return "\n".join(lines) if len(lines) > 2 else ""
