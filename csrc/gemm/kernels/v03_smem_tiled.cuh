// Rung 3 of the GEMM ladder: smem_tiled. Its kernel also serves rung 4
// (v04_smem_padded.cuh), which changes only the padding template argument.
//
// What changed from coalesced: a 32x32 block cooperatively stages a 32x32 tile
// of A and of B in shared memory per k-step, then every thread runs 32 FMAs
// out of shared memory. Each global element is loaded once per block instead
// of once per thread: global loads per FMA drop from 2 to 2/32 (0.125 B/FLOP).
//
// Layout: A is stored k-major (As[k][m], transposed), the layout the
// register-blocked rungs need for their per-thread column of A. The global
// read of A stays coalesced (threadIdx.x walks k), so the store into
// shared memory writes a column: with a [32][32] array all 32 addresses of a
// warp fall in one bank, a 32-way conflict on every tile store. Linear's
// column-major weight W [N, K] is staged the same way for B. The compute loop
// reads As[k][ty] (one address per warp: broadcast) and Bs[k][tx]
// (consecutive words): conflict-free.
//
// Measured (H200, fp32 4096^3, benchmarks/results/gemm-ladder_h200.json):
// 4.97 TFLOP/s (10.0x naive; published claim for shared-memory tiles 3.2x), no
// faster than coalesced: ncu counts 2.12 G shared-store bank conflicts.
#pragma once

#include "gemm/kernels/ladder_common.cuh"

namespace memopt {

constexpr int kSmemTile = 32;

template <int kPad, bool kBColMajor>
__global__ void __launch_bounds__(kSmemTile * kSmemTile) gemm_smem_tiled_kernel(GemmArgs p) {
  __shared__ float As[kSmemTile][kSmemTile + kPad];  // (k, m)
  __shared__ float Bs[kSmemTile][kSmemTile + kPad];  // (k, n)
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * kSmemTile;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * kSmemTile;
  float acc = 0.f;
  for (int64_t k0 = 0; k0 < p.K; k0 += kSmemTile) {
    As[tx][ty] = load_a(p, m0 + ty, k0 + tx);  // global: tx walks k (coalesced)
    if (kBColMajor) {
      Bs[tx][ty] = load_b<true>(p, k0 + tx, n0 + ty);  // W[n, k]: tx walks k
    } else {
      Bs[ty][tx] = load_b<false>(p, k0 + ty, n0 + tx);  // B[k, n]: tx walks n
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kSmemTile; ++k) acc += As[k][ty] * Bs[k][tx];
    __syncthreads();
  }
  store_output(p, m0 + ty, n0 + tx, acc);
}

}  // namespace memopt
