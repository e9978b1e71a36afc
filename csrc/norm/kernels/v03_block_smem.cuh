// Rung 3 of the LayerNorm / RMSNorm ladder: block_smem.
//
// What changed from warp_per_row: a block of kNormBlockThreads threads owns
// a row, so a wide row (4096-262144 elements) is read by 256 threads at once
// instead of 32, and one row's worth of loads fills an SM. The row is cached
// in shared memory (in the input dtype, up to `cached` elements: as much as
// the launcher gives it: 44 KB, 22528 16-bit or 11264 fp32 elements) between
// the statistics and the write: global memory is read once for rows that
// fit, and the part past the cache is re-read. Statistics:
// warp shuffles, then one value a warp through shared memory (block_sum).
//
// Expected: near copy speed for wide rows; at narrow rows (768-1024) one
// block a row leaves threads idle (1024 elements = 4 a thread) and pays two
// block-wide barriers a reduction: rung 4 packs several rows into a block.
//
// Measured (the norms suite, H200, benchmarks/results/norms_h200.json):
// 16384x4096 layer_norm 80.2% of copy fp32, 38.9% bf16.
#pragma once

#include "norm/kernels/normalize.cuh"

namespace memopt {

constexpr int kNormBlockThreads = 256;

template <typename scalar_t, typename param_t, bool kRms>
__global__ void __launch_bounds__(kNormBlockThreads)
    norm_block_smem_kernel(const scalar_t* __restrict__ x, const param_t* __restrict__ weight,
                           const param_t* __restrict__ bias, scalar_t* __restrict__ y,
                           int64_t row_length, int64_t in_stride, int64_t cached, float eps) {
  extern __shared__ unsigned char norm_smem[];
  scalar_t* row_cache = reinterpret_cast<scalar_t*>(norm_smem);
  __shared__ float scratch[kNormBlockThreads / 32];
  const int64_t row = blockIdx.x;
  const scalar_t* xr = x + row * in_stride;  // rows in_stride apart, out contiguous
  scalar_t* yr = y + row * row_length;
  const float n = static_cast<float>(row_length);
  const auto element = [&](int64_t i) {
    return static_cast<float>(i < cached ? row_cache[i] : xr[i]);
  };

  float sum = 0.f;
  for (int64_t i = threadIdx.x; i < row_length; i += kNormBlockThreads) {
    const scalar_t v = xr[i];
    if (i < cached) row_cache[i] = v;
    sum += static_cast<float>(v);
  }
  // block_sum's barrier also publishes row_cache; RMSNorm skips the mean but
  // still needs that barrier.
  const float total = block_sum<kNormBlockThreads / 32>(sum, scratch);
  const float mean = kRms ? 0.f : total / n;

  float sq = 0.f;
  for (int64_t i = threadIdx.x; i < row_length; i += kNormBlockThreads) {
    const float d = element(i) - mean;
    sq += d * d;
  }
  const float inv_std = rsqrtf(block_sum<kNormBlockThreads / 32>(sq, scratch) / n + eps);

  for (int64_t i = threadIdx.x; i < row_length; i += kNormBlockThreads) {
    yr[i] = static_cast<scalar_t>(normalize<kRms>(element(i), mean, inv_std, weight, bias, i));
  }
}

}  // namespace memopt
