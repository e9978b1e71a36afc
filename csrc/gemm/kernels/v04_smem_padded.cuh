// Rung 4 of the GEMM ladder: smem_padded.
//
// What changed from smem_tiled: each shared-memory row holds 33 words instead
// of 32. The transposed tile store writes address tx * 33 + ty, which puts the
// 32 threads of a warp in 32 different banks instead of one: the 32-way
// conflict on every tile store is gone. The kernel is smem_tiled's with
// kPad = 1 (v03_smem_tiled.cuh); 128 bytes more shared memory per tile.
//
// Arithmetic as rung 3: 2/32 global loads per FMA, one shared load per FMA.
//
// Measured (H200, fp32 4096^3, benchmarks/results/gemm-ladder_h200.json):
// 6.64 TFLOP/s (13.3x naive), +34% over smem_tiled; ncu: shared-store bank
// conflicts 2.12 G -> 16 M.
#pragma once

#include "gemm/kernels/v03_smem_tiled.cuh"

namespace memopt {

// One word of padding per 32-word row: the row stride 33 is odd, so a column
// of the tile walks all 32 banks.
constexpr int kSmemPaddedPad = 1;

}  // namespace memopt
