// Rung 1 of the softmax ladder: naive, one thread per softmax row, three
// passes over global memory (max, sum of exponentials, normalized write).
//
// Layout: the input is [outer, dim_size, inner]; row r = (o, i) has its
// elements `inner` apart. For a softmax over the last dim (inner = 1) the
// threads of a warp read 32 different rows dim_size elements apart
// (uncoalesced, 32 sectors per request); over an inner dim (inner >= 32) the
// same loop is coalesced, since neighbouring threads own neighbouring columns.
//
// Bottleneck it shows: every element is read 3 times and written once, and a
// warp's loads scatter; few rows leave most SMs idle.
//
// Arithmetic: ~2 exp + 3 FLOP per element; memory-bound, figure of merit GB/s.
//
// Measured (the norms suite, H200, benchmarks/results/norms_h200.json):
// 16384x4096 6.8% of copy fp32, 3.6% bf16.
#pragma once

#include "common/nan_max.h"

namespace memopt {

constexpr int kSoftmaxNaiveThreads = 128;

template <typename in_t, typename out_t>
__global__ void __launch_bounds__(kSoftmaxNaiveThreads)
    softmax_naive_kernel(const in_t* __restrict__ x, out_t* __restrict__ y, int64_t outer,
                         int64_t dim_size, int64_t inner, int64_t in_stride) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kSoftmaxNaiveThreads + threadIdx.x;
  if (row >= outer * inner) return;
  // Input rows of `outer` in_stride apart (dim_size * inner when contiguous);
  // the output is contiguous.
  const int64_t base = (row / inner) * in_stride + row % inner;
  const int64_t out_base = (row / inner) * dim_size * inner + row % inner;
  float max_v = -INFINITY;
  for (int64_t d = 0; d < dim_size; ++d) {
    max_v = nan_propagating_max(max_v, static_cast<float>(x[base + d * inner]));
  }
  // One thread adds the whole row: in fp32 the error of a sequential sum grows
  // with the width (3e-4 at 262144 columns); a double accumulator keeps 1e-7.
  double sum = 0.0;
  for (int64_t d = 0; d < dim_size; ++d) sum += expf(static_cast<float>(x[base + d * inner]) - max_v);
  const float inv_sum = static_cast<float>(1.0 / sum);
  for (int64_t d = 0; d < dim_size; ++d) {
    y[out_base + d * inner] =
        static_cast<out_t>(expf(static_cast<float>(x[base + d * inner]) - max_v) * inv_sum);
  }
}

}  // namespace memopt
