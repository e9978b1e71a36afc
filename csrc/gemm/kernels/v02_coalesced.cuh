// Rung 2 of the GEMM ladder: coalesced.
//
// What changed from naive: the thread-to-output map is transposed. threadIdx.x
// now walks columns n, so at each k the 32 threads of a warp read 32
// consecutive B[k, n .. n+31] (one 128-byte line, 4 sectors per request
// instead of 32) and store 32 consecutive C elements; A[m, k] is one address
// for the whole warp (a broadcast).
//
// Bottleneck it removes: uncoalesced global traffic. What remains: nothing is
// reused from on-chip memory on purpose; each FMA still issues 2 global loads
// (4 B/FLOP), served mostly by L1/L2.
//
// Measured (H200, fp32 4096^3, benchmarks/results/gemm-ladder_h200.json):
// 5.08 TFLOP/s, 10.2x naive (published claim: 1.8x), 9.9% of cuBLAS; ncu:
// 2.5 sectors per request (from 16.5).
#pragma once

#include "gemm/kernels/ladder_common.cuh"

namespace memopt {

constexpr int kCoalescedBlockCols = 32;  // a warp along n
constexpr int kCoalescedBlockRows = 8;   // 256 threads

__global__ void __launch_bounds__(kCoalescedBlockCols * kCoalescedBlockRows)
    gemm_coalesced_kernel(GemmArgs p) {
  const int64_t n = static_cast<int64_t>(blockIdx.x) * kCoalescedBlockCols + threadIdx.x;
  const int64_t m = static_cast<int64_t>(blockIdx.y) * kCoalescedBlockRows + threadIdx.y;
  if (m >= p.M || n >= p.N) return;
  const float* a_row = p.a + m * p.a_stride_m;
  const float* b_col = p.b + n * p.b_stride_n;
  float acc = 0.f;
  for (int64_t k = 0; k < p.K; ++k) acc += a_row[k * p.a_stride_k] * b_col[k * p.b_stride_k];
  store_output(p, m, n, acc);
}

}  // namespace memopt
