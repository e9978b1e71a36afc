// Rung 3 of the softmax ladder: block_smem (softmax over the last dim).
//
// What changed from warp_per_row: a block of kSoftmaxBlockThreads threads
// owns a row, so wide rows (4096-262144) are read by 256 threads at once; the
// row is cached in shared memory (input dtype, up to `cached` elements)
// between the three passes, so global memory is read once for rows that fit;
// the part past the cache is re-read. Reductions: warp shuffles, then one
// value a warp through shared memory.
//
// Measured (the norms suite, H200, benchmarks/results/norms_h200.json):
// 16384x4096 72.7% of copy fp32, 37.6% bf16.
#pragma once

#include "common/block_reduce.cuh"

namespace memopt {

constexpr int kSoftmaxBlockThreads = 256;

template <typename in_t, typename out_t>
__global__ void __launch_bounds__(kSoftmaxBlockThreads)
    softmax_block_smem_kernel(const in_t* __restrict__ x, out_t* __restrict__ y,
                              int64_t dim_size, int64_t in_stride, int64_t cached) {
  extern __shared__ unsigned char softmax_smem[];
  in_t* row_cache = reinterpret_cast<in_t*>(softmax_smem);
  __shared__ float scratch[kSoftmaxBlockThreads / 32];
  constexpr int kWarps = kSoftmaxBlockThreads / 32;
  const in_t* xr = x + static_cast<int64_t>(blockIdx.x) * in_stride;  // out contiguous
  out_t* yr = y + static_cast<int64_t>(blockIdx.x) * dim_size;
  const auto element = [&](int64_t i) {
    return static_cast<float>(i < cached ? row_cache[i] : xr[i]);
  };

  float max_v = -INFINITY;
  for (int64_t i = threadIdx.x; i < dim_size; i += kSoftmaxBlockThreads) {
    const in_t v = xr[i];
    if (i < cached) row_cache[i] = v;
    max_v = nan_propagating_max(max_v, static_cast<float>(v));
  }
  max_v = group_reduce<kWarps, kWarps>(max_v, scratch, MaxOp{});

  float sum = 0.f;
  for (int64_t i = threadIdx.x; i < dim_size; i += kSoftmaxBlockThreads) {
    sum += expf(element(i) - max_v);
  }
  const float inv_sum = 1.f / block_sum<kWarps>(sum, scratch);

  for (int64_t i = threadIdx.x; i < dim_size; i += kSoftmaxBlockThreads) {
    yr[i] = static_cast<out_t>(expf(element(i) - max_v) * inv_sum);
  }
}

}  // namespace memopt
