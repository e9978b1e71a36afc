// Rung 6 of the GEMM ladder: register_blocked.
//
// What changed from double_buffered: each thread computes an 8x8 micro-tile
// of C held in 64 register accumulators, and a block of 256 threads covers a
// 128x128 tile of C, stepping k by 8. Per k, a thread reads 8 values of A and
// 8 of B from shared memory into registers and does 64 FMAs with them: 16
// shared loads per 64 FMAs (0.25 per FMA, against 2 per FMA in rungs 3-5).
// Global traffic per FMA shrinks with the tile: each element of the 128x128
// block tile's A and B strips is loaded once for 128 FMAs (2/128 loads per
// FMA, 0.0625 B/FLOP).
//
// Bottleneck it removes: shared-memory bandwidth and instruction overhead per
// FMA (rungs 3-5 issue a shared load for every FMA). What remains: scalar
// 4-byte loads everywhere, and B reads with a 4-way bank conflict (threads
// 8 words apart: tn and tn + 4 share a bank); a single shared stage, so loads
// stall the block at every k-step.
//
// Measured (H200, fp32 4096^3, benchmarks/results/gemm-ladder_h200.json):
// 20.5 TFLOP/s, 41x naive, 40% of cuBLAS; ncu: 268 M shared-load bank
// conflicts (the 4-way B reads), 129-140 registers.
#pragma once

#include "gemm/kernels/ladder_common.cuh"

namespace memopt {

namespace register_blocked {
constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 8;
constexpr int kThreadM = 8, kThreadN = 8;
constexpr int kThreads = (kBlockM / kThreadM) * (kBlockN / kThreadN);  // 256
static_assert(kBlockM * kBlockK % kThreads == 0 && kBlockN * kBlockK % kThreads == 0,
              "each thread loads a whole number of A and B tile elements");
}  // namespace register_blocked

template <bool kBColMajor>
__global__ void __launch_bounds__(register_blocked::kThreads)
    gemm_register_blocked_kernel(GemmArgs p) {
  using namespace register_blocked;
  __shared__ float As[kBlockK][kBlockM];  // (k, m)
  __shared__ float Bs[kBlockK][kBlockN];  // (k, n)
  const int t = threadIdx.x;
  const int tm = t / (kBlockN / kThreadN);  // 0..15: rows tm*8 .. tm*8+7
  const int tn = t % (kBlockN / kThreadN);  // 0..15: cols tn*8 .. tn*8+7
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * kBlockM;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * kBlockN;
  float acc[kThreadM][kThreadN] = {};
  float a_frag[kThreadM], b_frag[kThreadN];
  for (int64_t k0 = 0; k0 < p.K; k0 += kBlockK) {
#pragma unroll
    for (int i = 0; i < kBlockM * kBlockK / kThreads; ++i) {
      const int idx = t + i * kThreads;  // consecutive threads walk k, then m
      As[idx % kBlockK][idx / kBlockK] = load_a(p, m0 + idx / kBlockK, k0 + idx % kBlockK);
    }
#pragma unroll
    for (int i = 0; i < kBlockN * kBlockK / kThreads; ++i) {
      const int idx = t + i * kThreads;
      if (kBColMajor) {  // W[n, k]: consecutive threads walk k
        Bs[idx % kBlockK][idx / kBlockK] = load_b<true>(p, k0 + idx % kBlockK, n0 + idx / kBlockK);
      } else {  // B[k, n]: consecutive threads walk n
        Bs[idx / kBlockN][idx % kBlockN] = load_b<false>(p, k0 + idx / kBlockN, n0 + idx % kBlockN);
      }
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kBlockK; ++k) {
#pragma unroll
      for (int i = 0; i < kThreadM; ++i) a_frag[i] = As[k][tm * kThreadM + i];
#pragma unroll
      for (int j = 0; j < kThreadN; ++j) b_frag[j] = Bs[k][tn * kThreadN + j];
#pragma unroll
      for (int i = 0; i < kThreadM; ++i) {
#pragma unroll
        for (int j = 0; j < kThreadN; ++j) acc[i][j] += a_frag[i] * b_frag[j];
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kThreadM; ++i) {
#pragma unroll
    for (int j = 0; j < kThreadN; ++j) {
      store_output(p, m0 + tm * kThreadM + i, n0 + tn * kThreadN + j, acc[i][j]);
    }
  }
}

}  // namespace memopt
