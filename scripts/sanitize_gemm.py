"""The tensor-core GEMM rungs under NVIDIA Compute Sanitizer: each rung once per case,
small shapes, so a sanitized run (kernels ~100x slower) takes seconds.

    compute-sanitizer --tool memcheck  python scripts/sanitize_gemm.py
    compute-sanitizer --tool racecheck python scripts/sanitize_gemm.py
    compute-sanitizer --tool synccheck python scripts/sanitize_gemm.py

Cases, bfloat16, for each of wgmma, wgmma_split, splitk, gemv and mma that ``torch_memopt.variants`` lists:
one tile-aligned shape and one with tails in M, N (and K for gemv), in two layouts:
``gemm`` (b [K, N] row-major) and ``linear`` (weight [N, K], with a bias and gelu, so
the epilogue runs too); wgmma also gets a K % 8 != 0 case (its launcher re-lays the
operands into an aligned copy before TMA), and runs once per output tile the build has
(``torch_memopt._C._wgmma_tiles()``, 128 x 256 down to 64 x 64, set through
``torch_memopt._C._set_wgmma_tile``; ``--tiles 128x192,64x192`` narrows them; a tile built
for linear's layout only, ``_C._wgmma_linear_only_tiles()``, skips gemm's). Each case
synchronizes, so a fault is reported against it, and is checked against a float64
reference computed on the CPU (so the sanitizer sees only our kernels and the input fills).
One line per case.

The CUDA caching allocator is switched off (``PYTORCH_NO_CUDA_MEMORY_CACHING=1``, set
before torch is imported, unless the caller set it): memcheck can then see a read or
write past the end of each tensor instead of landing in the allocator's slack.

Exit status: 0 all correct; 1 a wrong result or a raised error; 2 nothing to run
(no GPU, a build without CUDA, or none of the rungs available).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("PYTORCH_NO_CUDA_MEMORY_CACHING", "1")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

RUNGS = ("wgmma", "wgmma_split", "splitk", "gemv", "mma", "wgmma_streamk")
STREAMK_TILES = ((128, 256), (128, 128))
TOLERANCE = 1e-2  # relative Frobenius error, bfloat16 output
# (label, M, N, K) per rung: 128x256 and 256x128 tiles see whole tiles at 256x256x128;
# 130x200x72 leaves tails in M and N (K a multiple of 8: TMA reads it directly).
# 2176x4096x64 is 272 tiles of 128 x 256 (more at the narrower tiles): past 132 CTAs a
# CTA runs two or three, so the bias's two shared-memory buffers a consumer are each
# refilled while racecheck watches (6ad241b).
# gemv and splitk are for M <= 64: 16 rows aligned, 3 rows with N and K tails.
SHAPES = {
    "wgmma": [("aligned", 256, 256, 128), ("tails", 130, 200, 72), ("K % 8 != 0", 130, 200, 71),
              ("3 tiles/CTA", 2176, 4096, 64)],
    # 2 tiles, 16 k-tiles: 4 splits; tails in M, N and K (9 k-tiles of 520): 2 splits.
    "wgmma_split": [("aligned", 256, 256, 1024), ("tails", 130, 200, 520)],
    # 2 tiles of 16 k-tiles over 32 CTAs (each tile in 16 runs, 15 partials fixed up);
    # tails: 4 tiles of 9 k-tiles, 36 CTAs.
    "wgmma_streamk": [("shared", 256, 256, 1024), ("tails", 130, 200, 520)],
    "mma": [("aligned", 256, 256, 128), ("tails", 130, 200, 72)],
    "gemv": [("aligned", 16, 256, 128), ("tails", 3, 200, 72)],
    # 64 rows x 1024 k: 4 splits in a cluster at N = 256 (4 row tiles); tails: 3
    # tokens, 200 rows, k 72 (a k-tile tail), one split. The 64-token tile's fp32
    # partial (17 KB) runs past the first stage, unlike the narrower tiles': 4 splits,
    # 2 splits with tails (9 k-tiles), and one split (4 k-tiles).
    "splitk": [("aligned", 16, 256, 1024), ("tails", 3, 200, 72), ("tok64", 64, 256, 1024),
               ("tok64 tail", 40, 200, 520), ("tok64 1spl", 64, 256, 256)],
}
LAYOUTS = ("gemm", "linear")


def run_case(rung: str, layout: str, m: int, n: int, k: int) -> float:
    """Our output's relative Frobenius error against float64 for one fresh input set."""
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    if layout == "gemm":
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        out = torch.ops.memopt.gemm(a, b, variant=rung)
        torch.cuda.synchronize()
        ref = a.cpu().double() @ b.cpu().double()
    else:
        weight = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        bias = torch.randn(n, device="cuda", dtype=torch.bfloat16)
        out = torch.ops.memopt.linear(a, weight, bias, activation="gelu", variant=rung)
        torch.cuda.synchronize()
        ref = F.gelu(F.linear(a.cpu().double(), weight.cpu().double(), bias.cpu().double()))
    out = out.cpu().double()
    if out.shape != ref.shape or not torch.isfinite(out).all():
        return float("inf")
    return float(torch.linalg.vector_norm(out - ref) / torch.linalg.vector_norm(ref))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--rungs", default=",".join(RUNGS),
                        help="comma-separated subset of " + ", ".join(RUNGS) + " (default: all)")
    parser.add_argument("--tiles", default="",
                        help="wgmma's tiles as MxN, comma-separated (default: every built tile)")
    args = parser.parse_args(argv)

    import torch_memopt

    if not (torch.cuda.is_available() and torch_memopt.built_with_cuda()):
        print("sanitize_gemm.py needs a CUDA GPU and a torch_memopt build with CUDA", flush=True)
        return 2
    listed = torch_memopt.variants("gemm", "cuda")
    wanted = [r.strip() for r in args.rungs.split(",") if r.strip()]
    rungs = [r for r in RUNGS if r in wanted and r in listed]
    for rung in wanted:
        if rung not in listed:
            print(f"{rung:<6} skipped: not in torch_memopt.variants('gemm', 'cuda') "
                  f"({', '.join(listed)})", flush=True)
    if not rungs:
        print("nothing to run", flush=True)
        return 2
    from torch_memopt import _C

    wgmma_tiles = [tuple(t) for t in _C._wgmma_tiles()]
    # Tiles built for linear's layout only (128 x 168): set for gemm's row-major b they
    # run 128 x 192, already sanitized under its own name.
    linear_only = {tuple(t) for t in _C._wgmma_linear_only_tiles()}
    if args.tiles:
        asked = [tuple(int(v) for v in t.split("x")) for t in args.tiles.split(",") if t.strip()]
        unknown = [t for t in asked if t not in wgmma_tiles]
        if unknown:
            parser.error(f"--tiles: {unknown} not among the built tiles {wgmma_tiles}")
        wgmma_tiles = asked
    torch.manual_seed(0)
    failures = 0
    tiles_of = {"wgmma": wgmma_tiles, "wgmma_streamk": STREAMK_TILES}
    configs = [(rung, tile) for rung in rungs for tile in tiles_of.get(rung, ((0, 0),))]
    for rung, tile in configs:
        name = f"{rung} {tile[0]}x{tile[1]}" if tile[0] else rung
        for label, m, n, k in SHAPES[rung]:
            for layout in LAYOUTS:
                if rung == "wgmma" and tile in linear_only and layout == "gemm":
                    print(f"{name:<13} {layout:<7} {label:<10} skipped: built for linear's "
                          f"layout only (gemm's row-major b runs 128x192 in its place)", flush=True)
                    continue
                started = time.monotonic()
                try:
                    _C._set_wgmma_tile(*tile)
                    error = run_case(rung, layout, m, n, k)
                    ok = error <= TOLERANCE
                    result = f"rel err {error:.1e} " + ("ok" if ok else f"WRONG (> {TOLERANCE:g})")
                except Exception as exc:  # report and go on: the next case may still run
                    ok = False
                    first = (str(exc).strip().splitlines() or [""])[0]
                    result = f"ERROR {type(exc).__name__}: {first}"
                finally:
                    _C._set_wgmma_tile(0, 0)
                failures += not ok
                shape = f"{m}x{n}x{k}"
                print(f"{name:<13} {layout:<7} {label:<10} {shape:<12} {result}  "
                      f"({time.monotonic() - started:.1f} s)", flush=True)
    print(f"{failures} of the cases failed" if failures else "all cases correct", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
