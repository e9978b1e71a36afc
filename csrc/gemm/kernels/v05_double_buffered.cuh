// Rung 5 of the GEMM ladder: double_buffered.
//
// What changed from smem_padded: two shared-memory stages. While the block
// computes on tile t, the copy of tile t+1 is already in flight through
// cp.async (sm_80+: global -> shared without a register round trip, zero-fill
// past the matrix edge), so the load latency (~500+ cycles from HBM) hides
// behind 32 FMAs per thread instead of stalling the block at every k-step.
// One __syncthreads per tile instead of two.
//
// Arithmetic as rung 4: 2/32 global loads per FMA; shared memory 2 x 2 x 32 x
// 33 x 4 B = 16.5 KB per block.
//
// Measured (H200, fp32 4096^3, benchmarks/results/gemm-ladder_h200.json):
// 6.63 TFLOP/s, 13.3x naive (published claim: 4.5x), the same as smem_padded:
// with 2 shared loads per FMA the block is bound by shared-memory traffic, not
// by the latency the second stage hides. The step pays off once registers
// take the load off shared memory (rung 8).
#pragma once

#include "gemm/kernels/ladder_common.cuh"
#include "gemm/kernels/v04_smem_padded.cuh"

namespace memopt {

template <bool kBColMajor>
__global__ void __launch_bounds__(kSmemTile * kSmemTile) gemm_double_buffered_kernel(GemmArgs p) {
  __shared__ float As[2][kSmemTile][kSmemTile + kSmemPaddedPad];  // (stage, k, m)
  __shared__ float Bs[2][kSmemTile][kSmemTile + kSmemPaddedPad];  // (stage, k, n)
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * kSmemTile;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * kSmemTile;
  // Out-of-range copies read nothing; any valid address serves as their source.
  const auto issue_tile = [&](int stage, int64_t k0) {
    const int64_t am = m0 + ty, ak = k0 + tx;
    const bool a_ok = am < p.M && ak < p.K;
    cp_async_4(&As[stage][tx][ty], a_ok ? p.a + am * p.a_stride_m + ak : p.a, a_ok);
    if (kBColMajor) {
      const int64_t bk = k0 + tx, bn = n0 + ty;
      const bool b_ok = bk < p.K && bn < p.N;
      cp_async_4(&Bs[stage][tx][ty], b_ok ? p.b + bn * p.b_stride_n + bk : p.b, b_ok);
    } else {
      const int64_t bk = k0 + ty, bn = n0 + tx;
      const bool b_ok = bk < p.K && bn < p.N;
      cp_async_4(&Bs[stage][ty][tx], b_ok ? p.b + bk * p.b_stride_k + bn : p.b, b_ok);
    }
    cp_async_commit();
  };
  const int64_t num_tiles = (p.K + kSmemTile - 1) / kSmemTile;
  issue_tile(0, 0);
  float acc = 0.f;
  for (int64_t t = 0; t < num_tiles; ++t) {
    const int stage = static_cast<int>(t & 1);
    cp_async_wait<0>();  // this thread's copies of tile t have landed
    // Tile t is visible to every thread, and every thread is done reading
    // tile t-1, whose buffers the next copy reuses.
    __syncthreads();
    if (t + 1 < num_tiles) issue_tile(stage ^ 1, (t + 1) * kSmemTile);
#pragma unroll
    for (int k = 0; k < kSmemTile; ++k) acc += As[stage][k][ty] * Bs[stage][k][tx];
  }
  store_output(p, m0 + ty, n0 + tx, acc);
}

}  // namespace memopt
