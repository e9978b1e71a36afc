// Rung 2 of the softmax ladder: warp_per_row (softmax over the last dim).
//
// What changed from naive: a warp owns a row and its lanes read consecutive
// elements (coalesced), the row stays in registers (kCache elements a lane:
// rows up to 32 x kCache wide) between the max, the sum of exponentials and
// the write, so global memory is read once, and both reductions are warp
// shuffles. Wider rows re-read the part past the cache. kCache is sized to
// the row (8, 16 or 32): a fixed 32 made a 197-wide row pay 32
// exponentials a lane for 7 elements (33% of copy at 65536 x 197).
//
// Measured (the norms suite, H200, benchmarks/results/norms_h200.json):
// 16384x4096 51.8% of copy fp32, 45.8% bf16; 65536x197 77.9% fp32 (33% with a
// fixed 32-element cache).
#pragma once

#include "common/block_reduce.cuh"
#include "common/fast_exp.cuh"

namespace memopt {

constexpr int kSoftmaxWarpRowsPerBlock = 4;  // 128 threads

template <typename in_t, typename out_t, int kSoftmaxWarpCache>
__global__ void __launch_bounds__(32 * kSoftmaxWarpRowsPerBlock)
    softmax_warp_per_row_kernel(const in_t* __restrict__ x, out_t* __restrict__ y, int64_t rows,
                                int64_t dim_size, int64_t in_stride) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kSoftmaxWarpRowsPerBlock + threadIdx.x / 32;
  if (row >= rows) return;  // whole warps leave: the shuffles stay full
  const int lane = threadIdx.x % 32;
  const in_t* xr = x + row * in_stride;  // rows in_stride apart, out contiguous
  out_t* yr = y + row * dim_size;

  float cache[kSoftmaxWarpCache];
  float max_v = -INFINITY;
#pragma unroll
  for (int k = 0; k < kSoftmaxWarpCache; ++k) {
    const int64_t i = lane + 32 * k;
    cache[k] = i < dim_size ? static_cast<float>(xr[i]) : -INFINITY;
    max_v = nan_propagating_max(max_v, cache[k]);
  }
  for (int64_t i = lane + 32 * kSoftmaxWarpCache; i < dim_size; i += 32) {
    max_v = nan_propagating_max(max_v, static_cast<float>(xr[i]));
  }
  max_v = warp_reduce(max_v, MaxOp{});

  // A row of only -inf: max_v = -inf takes the exact form, whose (-inf) - (-inf)
  // gives NaN everywhere, as torch.softmax does.
  with_exp_shift(max_v, [&](auto exp) {
    float sum = 0.f;
#pragma unroll
    for (int k = 0; k < kSoftmaxWarpCache; ++k) {
      const int64_t i = lane + 32 * k;
      cache[k] = exp(cache[k]);
      if (i < dim_size) sum += cache[k];
    }
    // Past the cache a lane adds dim_size / 32 terms (8192 at 262144 columns):
    // in double, or the fp32 sum drifts past 1e-5.
    double tail = 0.0;
    for (int64_t i = lane + 32 * kSoftmaxWarpCache; i < dim_size; i += 32) {
      tail += exp(static_cast<float>(xr[i]));
    }
    const float inv_sum = 1.f / warp_sum(sum + static_cast<float>(tail));

#pragma unroll
    for (int k = 0; k < kSoftmaxWarpCache; ++k) {
      const int64_t i = lane + 32 * k;
      if (i < dim_size) yr[i] = static_cast<out_t>(cache[k] * inv_sum);
    }
    for (int64_t i = lane + 32 * kSoftmaxWarpCache; i < dim_size; i += 32) {
      yr[i] = static_cast<out_t>(exp(static_cast<float>(xr[i])) * inv_sum);
    }
  });
}

}  // namespace memopt
