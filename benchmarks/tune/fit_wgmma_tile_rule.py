"""Fit gemm_plan.cpp's wgmma tile rule (wave_ktile_ns; a fixed time a wave, which the rule
drops while the fit finds it 0) to the tile sweeps' JSON, and score it against the
per-shape best tile. Runs anywhere (no GPU).

    python benchmarks/tune/fit_wgmma_tile_rule.py \
        benchmarks/results/tune/wgmma_tiles_h200.json \
        benchmarks/results/tune/wgmma_tiles_encoders_h200.json

The model, per tile t: time = waves x (k_tiles x per_ktile[t] + fixed[t]), waves =
ceil(tiles / SMs); for 128 x 256 a lone partial wave (fewer tiles than SMs) has its own
per_ktile; a tile whose one or two rows of tiles M cuts costs PARTIAL_ROW_SLOWDOWN x (those
shapes are left out of the per-k-tile medians). The rule takes the tile of least estimated
time, a tile replacing the one before it (in kWgmmaTiles' order) only when 2% faster, as
wgmma_tile does. The fit minimizes the geomean loss of the rule's pick against the best tile
of each shape by coordinate descent (`descend`) from two starts, gemm_plan.cpp's constants
(RULE_KTILE, RULE_FIXED: edit them with the rule) and the per-k-tile medians with no fixed
time, and prints the better, its loss beside the constants' and the shapes where its pick is
not the best.
"""

from __future__ import annotations

import json
import math
import statistics
import sys

# The tiles the fit scores, set by load: those every record has a time for (so sweeps made
# before a tile existed still fit), in kWgmmaTiles' order (gemm_plan.h: largest first; of
# equal areas, 128 rows first).
TILES: tuple = ()
# The constants in gemm_plan.cpp now, scored beside the fit (edit with the rule).
# 128 x 168's 541 is interpolated, not fitted (the sweeps before it have no time for it).
RULE_KTILE = {((128, 256), False): 799, ((128, 192), False): 611, ((128, 168), False): 541,
              ((128, 128), False): 431, ((64, 256), False): 463, ((64, 192), False): 356,
              ((128, 64), False): 296, ((64, 128), False): 292, ((64, 64), False): 219}
RULE_FIXED = 0  # ns a wave, every tile: gemm_plan.cpp has no fixed term now
PARTIAL_ROW_SLOWDOWN = 1.7  # gemm_plan.cpp's kPartialRowWaveSlowdown
GRID_NS = [250 * i for i in range(17)]


def load(paths: list[str]) -> tuple[list[dict], int]:
    """The records with a time for every tile that all of them timed; sets TILES to those."""
    global TILES
    raw, sms = [], 0
    for path in paths:
        data = json.load(open(path))
        sms = data["meta"]["sm_count"]
        raw += data["records"]
    timed = [{tuple(int(v) for v in k.split()[1].split("x")) for k in r["us"]
              if k.startswith("wgmma ")} for r in raw]
    TILES = tuple(sorted(set.intersection(*timed), key=lambda t: (-t[0] * t[1], -t[0])))
    records = [{"M": r["M"], "N": r["N"], "K": r["K"],
                "us": {t: r["us"][f"wgmma {t[0]}x{t[1]}"] for t in TILES}} for r in raw]
    return records, sms


def tiles_of(r: dict, t: tuple) -> int:
    return math.ceil(r["M"] / t[0]) * math.ceil(r["N"] / t[1])


def cut_half(r: dict, t: tuple) -> bool:
    """One or two rows of tiles, the last cut by M: the waves gemm_plan.cpp charges
    PARTIAL_ROW_SLOWDOWN."""
    return r["M"] % t[0] != 0 and math.ceil(r["M"] / t[0]) <= 2


def k_tiles(r: dict) -> int:
    return math.ceil(r["K"] / 64)


def per_ktile(records: list[dict], sms: int) -> dict:
    """ns a k-tile of a wave, the median over shapes: (t, lone) -> ns; lone only for 128 x 256."""
    out = {}
    for t in TILES:
        for lone in (False, True):
            if lone and t != (128, 256):
                continue
            values = []
            for r in records:
                n = tiles_of(r, t)
                if (n < sms) != lone or cut_half(r, t):
                    continue
                waves = math.ceil(n / sms)
                values.append(r["us"][t] * 1e3 / (waves * k_tiles(r)))
            if values:
                out[(t, lone)] = statistics.median(values)
    return out


def pick(r: dict, ktile: dict, fixed: dict, sms: int) -> tuple:
    def estimate(t):
        n = tiles_of(r, t)
        c = ktile.get((t, n < sms), ktile[(t, False)])
        slowdown = PARTIAL_ROW_SLOWDOWN if cut_half(r, t) else 1.0
        return math.ceil(n / sms) * (k_tiles(r) * c + fixed[t]) * slowdown

    best, best_ns = TILES[0], estimate(TILES[0])
    for t in TILES:
        if (t, False) not in ktile:  # constants from before the tile was built: not in the rule
            continue
        ns = estimate(t)
        if ns < 0.98 * best_ns:
            best, best_ns = t, ns
    return best


def loss(records: list[dict], fixed: dict, sms: int, ktile: dict | None = None) -> float:
    """Geomean of (the rule's pick's time / the best tile's time) - 1; ktile the per-k-tile
    medians unless given."""
    ktile = ktile if ktile is not None else per_ktile(records, sms)
    logs = [math.log(r["us"][pick(r, ktile, fixed, sms)] / min(r["us"].values())) for r in records]
    return math.exp(sum(logs) / len(logs)) - 1


def descend(records: list[dict], sms: int, ktile: dict, fixed: dict,
            medians: dict) -> tuple[dict, dict]:
    """Coordinate descent: each constant in turn over its grid (per k-tile: 85-115% of
    the median; fixed: GRID_NS), five rounds; of equal losses the value nearest the
    current one wins."""
    for _ in range(5):
        for key in ktile:
            start = ktile[key]
            around = medians.get(key, start)
            grid = {start} | {round(around * (0.85 + 0.01 * i)) for i in range(31)}
            ktile[key] = min(grid, key=lambda c: (round(loss(records, fixed, sms,
                                                               {**ktile, key: c}), 6),
                                                  abs(c - start)))
        for t in TILES:
            start = fixed[t]
            fixed[t] = min(GRID_NS, key=lambda f: (round(loss(records, {**fixed, t: f}, sms,
                                                              ktile), 6), abs(f - start)))
    return ktile, fixed


def main(paths: list[str]) -> int:
    records, sms = load(paths)
    medians = per_ktile(records, sms)
    # Two starts: the constants in gemm_plan.cpp (so the fit is never worse than them on
    # the data it is given) and the medians with no fixed time; the better fit is kept.
    # A tile the constants lack starts from its median.
    rounded = {k: round(v) for k, v in medians.items()}
    rule_fixed = {t: RULE_FIXED for t in TILES}
    fits = [descend(records, sms, {**rounded, **RULE_KTILE}, dict(rule_fixed), medians),
            descend(records, sms, dict(rounded), {t: 0 for t in TILES}, medians)]
    ktile, fixed = min(fits, key=lambda f: loss(records, f[1], sms, f[0]))
    print(f"{len(records)} shapes, {sms} SMs")
    for t in TILES:
        lone = f", lone partial wave {ktile[(t, True)]:.0f}" if (t, True) in ktile else ""
        print(f"  {t[0]}x{t[1]}: {ktile[(t, False)]:.0f} ns a k-tile{lone} (median "
              f"{medians[(t, False)]:.0f}); fixed {fixed[t]} ns")
    print(f"fit vs the per-shape best tile: {100 * loss(records, fixed, sms, ktile):.2f}% "
          f"geomean; gemm_plan.cpp's constants now: "
          f"{100 * loss(records, rule_fixed, sms, RULE_KTILE):.2f}%")
    worst = []
    for r in records:
        t = pick(r, ktile, fixed, sms)
        best = min(r["us"], key=r["us"].get)
        if t != best:
            worst.append((r["us"][t] / r["us"][best], r, t, best))
    for ratio, r, t, best in sorted(worst, key=lambda w: w[0], reverse=True)[:8]:
        print(f"  M={r['M']} N={r['N']} K={r['K']}: picks {t[0]}x{t[1]} {r['us'][t]:.1f} us, "
              f"best {best[0]}x{best[1]} {r['us'][best]:.1f} us ({ratio:.3f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
