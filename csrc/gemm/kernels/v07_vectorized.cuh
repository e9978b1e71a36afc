// Rung 7 of the GEMM ladder: vectorized.
//
// What changed from register_blocked: 16-byte accesses everywhere they fit.
// Each thread fetches its share of the A and B tiles with one float4 global
// load each (LDG.128: a quarter of the load instructions), and reads its
// fragments from shared memory as float4 (LDS.128: 4 per k-step instead of 16).
// A is still stored k-major (transposed) so that a thread's four rows are
// contiguous for LDS.128; its rows are padded to 132 words so the transposed
// stores of two threads sharing a row (k 0-3 and 4-7) land 16 banks apart.
// A thread's 8x8 micro-tile is now two 4-row by two 4-column strips 64 apart,
// not an 8x8 square: in a warp, the 16 threads along n then read 16
// consecutive 16-byte words of a B row, free of the 4-way conflict of rung 6.
// C is written as float4 where the row allows.
//
// 16-byte accesses need 16-byte-aligned rows: the launcher checks the base
// pointers and row strides and otherwise runs this kernel with kVec = false
// (the same tiling, guarded scalar loads).
//
// Measured (H200, fp32 4096^3, benchmarks/results/gemm-ladder_h200.json):
// 35.9 TFLOP/s, 72x naive (published claim for register accumulation +
// float4: 6.1x), 70% of cuBLAS; shared-load bank conflicts 41 K (from 268 M).
#pragma once

#include "gemm/kernels/ladder_common.cuh"

namespace memopt {

namespace vectorized {
constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 8;
constexpr int kThreads = 256;
constexpr int kPad = 4;  // As/Bs rows of 132 words: 16-byte aligned, transposed stores conflict-free
static_assert(kBlockM * kBlockK == 4 * kThreads && kBlockN * kBlockK == 4 * kThreads,
              "each thread loads exactly one float4 of A and one of B per tile");
}  // namespace vectorized

// Stores a float4 of four consecutive k values of row `r` into a k-major tile.
template <int kRowWords>
__device__ __forceinline__ void store_k_major(float (*tile)[kRowWords], int k, int r, float4 v) {
  tile[k + 0][r] = v.x;
  tile[k + 1][r] = v.y;
  tile[k + 2][r] = v.z;
  tile[k + 3][r] = v.w;
}

template <bool kVec, bool kBColMajor>
__global__ void __launch_bounds__(vectorized::kThreads) gemm_vectorized_kernel(GemmArgs p) {
  using namespace vectorized;
  __shared__ __align__(16) float As[kBlockK][kBlockM + kPad];  // (k, m)
  __shared__ __align__(16) float Bs[kBlockK][kBlockN + kPad];  // (k, n)
  const int t = threadIdx.x;
  const int tm = t / 16, tn = t % 16;  // rows tm*4 + {0..3} and +64; cols tn*4 + {0..3} and +64
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * kBlockM;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * kBlockN;
  // This thread's float4 of each tile: A row t/2, k (t%2)*4; B row t/32, n (t%32)*4
  // (row-major) or W row t/2, k (t%2)*4 (column-major).
  const int a_row = t / 2, a_k = (t % 2) * 4;
  float acc[8][8] = {};
  for (int64_t k0 = 0; k0 < p.K; k0 += kBlockK) {
    store_k_major(As, a_k, a_row, load_a4<kVec>(p, m0 + a_row, k0 + a_k));
    if (kBColMajor) {
      store_k_major(Bs, a_k, a_row, load_b4<kVec, true>(p, k0 + a_k, n0 + a_row));
    } else {
      const int b_k = t / 32, b_n = (t % 32) * 4;
      *reinterpret_cast<float4*>(&Bs[b_k][b_n]) = load_b4<kVec, false>(p, k0 + b_k, n0 + b_n);
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kBlockK; ++k) {
      const float4 a_lo = *reinterpret_cast<const float4*>(&As[k][tm * 4]);
      const float4 a_hi = *reinterpret_cast<const float4*>(&As[k][64 + tm * 4]);
      const float4 b_lo = *reinterpret_cast<const float4*>(&Bs[k][tn * 4]);
      const float4 b_hi = *reinterpret_cast<const float4*>(&Bs[k][64 + tn * 4]);
      const float a[8] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
      const float b[8] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
      for (int i = 0; i < 8; ++i) {
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int64_t m = m0 + (i < 4 ? tm * 4 + i : 64 + tm * 4 + i - 4);
    store_output4(p, m, n0 + tn * 4, make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]));
    store_output4(p, m, n0 + 64 + tn * 4, make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]));
  }
}

}  // namespace memopt
