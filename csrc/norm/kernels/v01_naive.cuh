// Rung 1 of the LayerNorm / RMSNorm ladder: naive, one thread per row.
//
// What it is: each thread walks its whole row three times (mean, squared
// deviations, normalize + write; RMSNorm skips the mean), fp32 statistics in
// registers, no shared memory and no cooperation between threads.
//
// Bottleneck it shows: at step i the 32 threads of a warp read element i of 32
// different rows, row_length elements apart: one sector per thread, 32 sectors
// per request, and each row is read from global memory two or three times.
// Rows below ~32 x 132 SMs also leave most of the GPU idle.
//
// Arithmetic: ~5 FLOP and 2-3 element reads + 1 write per element; memory-bound
// at any size, so the figure of merit is GB/s (bytes read + written once).
//
// Measured (the norms suite, H200, benchmarks/results/norms_h200.json):
// 16384x4096 layer_norm 7.0% of copy fp32, 3.6% bf16.
#pragma once

namespace memopt {

constexpr int kNormNaiveThreads = 128;

template <typename scalar_t, typename param_t, bool kRms>
__global__ void __launch_bounds__(kNormNaiveThreads)
    norm_naive_kernel(const scalar_t* __restrict__ x, const param_t* __restrict__ weight,
                      const param_t* __restrict__ bias, scalar_t* __restrict__ y,
                      int64_t rows, int64_t row_length, int64_t in_stride, float eps) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kNormNaiveThreads + threadIdx.x;
  if (row >= rows) return;
  const scalar_t* xr = x + row * in_stride;  // rows in_stride apart, out contiguous
  scalar_t* yr = y + row * row_length;
  const float n = static_cast<float>(row_length);
  float mean = 0.f;
  if (!kRms) {
    double sum = 0.0;  // one thread adds the whole row: fp32 would lose ~1e-5 at 65536
    for (int64_t i = 0; i < row_length; ++i) sum += static_cast<float>(xr[i]);
    mean = static_cast<float>(sum / n);
  }
  double sq = 0.0;
  for (int64_t i = 0; i < row_length; ++i) {
    const float d = static_cast<float>(xr[i]) - mean;
    sq += d * d;
  }
  const float inv = rsqrtf(static_cast<float>(sq / n) + eps);
  for (int64_t i = 0; i < row_length; ++i) {
    float v = (static_cast<float>(xr[i]) - mean) * inv;
    if (weight != nullptr) v *= static_cast<float>(weight[i]);
    if (bias != nullptr) v += static_cast<float>(bias[i]);
    yr[i] = static_cast<scalar_t>(v);
  }
}

}  // namespace memopt
