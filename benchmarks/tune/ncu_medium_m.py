"""The kernels behind one call each of cuBLAS and ours at the medium-M Llama layers, for
Nsight Compute: which kernel cuBLAS picks (its name carries the tile, stages, cluster and
split), its grid, and the in-kernel time of each, against ours.

    ncu --profile-from-start off --csv --metrics gpu__time_duration.sum,... \\
        python benchmarks/tune/ncu_medium_m.py [--encoders]

--encoders: the hidden-768 layers of BERT, GPT-2 and ViT instead (K = 768, 12 k-tiles),
where even the best tile runs 0.65-0.75x cuBLAS (wgmma_tiles_encoders_h200.json): whose
per-tile fixed cost (fill, epilogue, drain) is the lead.
--large: the transformer-gemm suite's worst cases at large M (4096 x 4096 x 14336 at 0.89x,
512 x 22016 x 4096 at 0.90x) and the 4096^3 / 8192 x 4096 x 4096 squares beside them: how
cuBLAS's mainloop differs from ours (its cluster and tile, from the name; tensor-pipe time).

Everything runs twice first, outside the profiled range, so no first-call work (TMA map
caches, cuBLAS heuristics, the allocator) is profiled.
"""
from __future__ import annotations

import sys

import torch
import torch.nn.functional as F

import torch_memopt

SHAPES = ((64, 6144, 4096), (128, 4096, 4096), (128, 6144, 4096), (128, 4096, 14336),
          (256, 4096, 4096), (256, 12288, 4096), (512, 4096, 4096), (512, 28672, 4096),
          (1024, 4096, 4096), (128, 4096, 64))
LARGE_SHAPES = ((4096, 4096, 14336), (512, 22016, 4096), (4096, 4096, 4096),
                (8192, 4096, 4096), (2048, 28672, 4096))
ENCODER_SHAPES = ((1576, 768, 768), (4096, 768, 768), (4096, 2304, 768), (4096, 3072, 768),
                  (4096, 768, 3072))


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    shapes = ENCODER_SHAPES if "--encoders" in args else LARGE_SHAPES if "--large" in args \
        else SHAPES
    calls = []
    for M, N, K in shapes:
        x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
        calls.append((f"cuBLAS {M}x{N}x{K}", lambda x=x, w=w: F.linear(x, w)))
        calls.append((f"ours {M}x{N}x{K}", lambda x=x, w=w: torch_memopt.linear(x, w)))
    for _, call in calls * 2:
        call()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    for name, call in calls:
        torch.cuda.nvtx.range_push(name)
        call()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
    torch.cuda.cudart().cudaProfilerStop()
    for name, _ in calls:
        print(name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
