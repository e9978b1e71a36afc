// Rung 2 of the LayerNorm / RMSNorm ladder: warp_per_row.
//
// What changed from naive: a warp owns a row and its 32 lanes read
// consecutive elements (one 128-byte line for fp32, 64 bytes for 16-bit types,
// per warp load: coalesced), instead of 32 threads reading 32 rows
// row_length apart. The row stays in registers (kCache elements a lane, rows
// up to 32 x kCache = 1024 wide) between the mean, the variance and the
// write, so global memory is read once; the statistics are reduced with warp
// shuffles, no shared memory. Wider rows re-read the part past the cache
// (from L2 for the widths this rung is meant for).
//
// Expected: bandwidth-bound once enough warps are in flight; each lane holds
// one element per load, so a warp has at most 32 x 4 bytes in flight per
// load instruction: the loads are narrow (rung 4 widens them to 16 bytes).
//
// Measured (the norms suite, H200, benchmarks/results/norms_h200.json):
// 16384x4096 layer_norm 62.0% of copy fp32, 34.7% bf16.
#pragma once

#include "norm/kernels/normalize.cuh"

namespace memopt {

constexpr int kNormWarpRowsPerBlock = 4;  // 128 threads
constexpr int kNormWarpCache = 32;        // elements a lane keeps in registers

template <typename scalar_t, typename param_t, bool kRms>
__global__ void __launch_bounds__(32 * kNormWarpRowsPerBlock)
    norm_warp_per_row_kernel(const scalar_t* __restrict__ x, const param_t* __restrict__ weight,
                             const param_t* __restrict__ bias, scalar_t* __restrict__ y,
                             int64_t rows, int64_t row_length, int64_t in_stride, float eps) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kNormWarpRowsPerBlock + threadIdx.x / 32;
  if (row >= rows) return;  // whole warps leave: the shuffles below stay full
  const int lane = threadIdx.x % 32;
  const scalar_t* xr = x + row * in_stride;  // rows in_stride apart, out contiguous
  scalar_t* yr = y + row * row_length;
  const float n = static_cast<float>(row_length);

  float cache[kNormWarpCache];
  float sum = 0.f;
#pragma unroll
  for (int k = 0; k < kNormWarpCache; ++k) {
    const int64_t i = lane + 32 * k;
    cache[k] = i < row_length ? static_cast<float>(xr[i]) : 0.f;
    sum += cache[k];
  }
  for (int64_t i = lane + 32 * kNormWarpCache; i < row_length; i += 32) sum += static_cast<float>(xr[i]);
  const float mean = kRms ? 0.f : warp_sum(sum) / n;

  // Squared deviations from the mean, not E[x^2] - mean^2: no cancellation
  // when |mean| >> std.
  float sq = 0.f;
#pragma unroll
  for (int k = 0; k < kNormWarpCache; ++k) {
    const int64_t i = lane + 32 * k;
    const float d = cache[k] - mean;
    if (i < row_length) sq += d * d;
  }
  for (int64_t i = lane + 32 * kNormWarpCache; i < row_length; i += 32) {
    const float d = static_cast<float>(xr[i]) - mean;
    sq += d * d;
  }
  const float inv_std = rsqrtf(warp_sum(sq) / n + eps);

#pragma unroll
  for (int k = 0; k < kNormWarpCache; ++k) {
    const int64_t i = lane + 32 * k;
    if (i < row_length) {
      yr[i] = static_cast<scalar_t>(normalize<kRms>(cache[k], mean, inv_std, weight, bias, i));
    }
  }
  for (int64_t i = lane + 32 * kNormWarpCache; i < row_length; i += 32) {
    yr[i] = static_cast<scalar_t>(
        normalize<kRms>(static_cast<float>(xr[i]), mean, inv_std, weight, bias, i));
  }
}

}  // namespace memopt
