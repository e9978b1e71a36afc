// Rung 1 of the GEMM ladder: naive.
//
// What it is: one thread per output element C[m, n], a K-long dot product read
// straight from global memory, fp32 accumulation, then the linear epilogue
// (bias, activation) and one store.
//
// Bottleneck it shows: the threads of a warp take consecutive m (threadIdx.x
// walks rows), so each warp-wide load of A touches 32 rows K elements apart
// (32 sectors per request instead of 4) and the store of C is strided by N.
// B[k, n] is the same address for the whole warp (a broadcast).
//
// Arithmetic: 2 global loads per FMA, 8 bytes per 2 FLOP in fp32 = 4 B/FLOP
// before caching; nothing is reused on purpose, so L1/L2 hits are all it gets.
//
// Strides: every operand is addressed through its own (row, column) strides,
// so transposed or sliced A and B run without a copy; linear passes its weight
// [N, K] as B with swapped strides.
//
// Measured (H200, fp32 4096^3, benchmarks/results/gemm-ladder_h200.json):
// 0.50 TFLOP/s, 1.0% of cuBLAS; ncu: 16.5 global-load sectors per request.
#pragma once

#include "common/activation.h"

namespace memopt {

// Block shape: 32 rows (the warp) x 32 columns; 1024 threads.
constexpr int kNaiveBlockRows = 32;
constexpr int kNaiveBlockCols = 32;

template <typename scalar_t>
__global__ void __launch_bounds__(kNaiveBlockRows * kNaiveBlockCols)
    gemm_naive_kernel(const scalar_t* __restrict__ a, int64_t a_stride_m, int64_t a_stride_k,
                      const scalar_t* __restrict__ b, int64_t b_stride_k, int64_t b_stride_n,
                      const scalar_t* __restrict__ bias, scalar_t* __restrict__ out,
                      int64_t M, int64_t N, int64_t K, Activation act) {
  const int64_t m = static_cast<int64_t>(blockIdx.x) * kNaiveBlockRows + threadIdx.x;
  const int64_t n = static_cast<int64_t>(blockIdx.y) * kNaiveBlockCols + threadIdx.y;
  if (m >= M || n >= N) return;
  float acc = 0.f;
  for (int64_t k = 0; k < K; ++k) {
    acc += static_cast<float>(a[m * a_stride_m + k * a_stride_k]) *
           static_cast<float>(b[k * b_stride_k + n * b_stride_n]);
  }
  if (bias != nullptr) acc += static_cast<float>(bias[n]);
  out[m * N + n] = static_cast<scalar_t>(apply_activation(act, acc));
}

}  // namespace memopt
