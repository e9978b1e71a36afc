// Device helpers every fp32 ladder rung shares: the fused epilogue, bounds-
// checked operand loads, cp.async wrappers and the launch-time grid helpers.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "common/activation.h"
#include "gemm/ladder.h"

namespace memopt {

// Writes one output element: bias, activation, bounds check.
__device__ __forceinline__ void store_output(const GemmArgs& p, int64_t m, int64_t n, float acc) {
  if (m < p.M && n < p.N) {
    if (p.bias != nullptr) acc += p.bias[n];
    p.out[m * p.N + n] = apply_activation(p.act, acc);
  }
}

// A[m, k] with zero outside the matrix (A has a unit k-stride in tiled rungs).
__device__ __forceinline__ float load_a(const GemmArgs& p, int64_t m, int64_t k) {
  return (m < p.M && k < p.K) ? p.a[m * p.a_stride_m + k] : 0.f;
}

// B[k, n] with zero outside the matrix; kColMajor: B is W [N, K] (unit k-stride).
template <bool kColMajor>
__device__ __forceinline__ float load_b(const GemmArgs& p, int64_t k, int64_t n) {
  if (k >= p.K || n >= p.N) return 0.f;
  return kColMajor ? p.b[n * p.b_stride_n + k] : p.b[k * p.b_stride_k + n];
}

// Four consecutive elements along a unit-stride row of `base` starting at
// `offset` (element `first` of the row): one 16-byte load when kVec (the
// launcher checked 16-byte alignment of the base and the row stride) and all
// four are inside `extent`, else guarded scalar loads with zeros past the end.
template <bool kVec>
__device__ __forceinline__ float4 load_row4(const float* base, int64_t offset, int64_t first,
                                            int64_t extent, bool row_valid) {
  if (!row_valid) return make_float4(0.f, 0.f, 0.f, 0.f);
  if (kVec && first + 3 < extent) return *reinterpret_cast<const float4*>(base + offset);
  float v[4];
#pragma unroll
  for (int c = 0; c < 4; ++c) v[c] = first + c < extent ? base[offset + c] : 0.f;
  return make_float4(v[0], v[1], v[2], v[3]);
}

// A[m, k .. k+3] (A has a unit k-stride in the tiled rungs).
template <bool kVec>
__device__ __forceinline__ float4 load_a4(const GemmArgs& p, int64_t m, int64_t k) {
  return load_row4<kVec>(p.a, m * p.a_stride_m + k, k, p.K, m < p.M);
}

// Row-major B[k, n .. n+3], or column-major (W [N, K]) B[k .. k+3, n].
template <bool kVec, bool kColMajor>
__device__ __forceinline__ float4 load_b4(const GemmArgs& p, int64_t k, int64_t n) {
  return kColMajor ? load_row4<kVec>(p.b, n * p.b_stride_n + k, k, p.K, n < p.N)
                   : load_row4<kVec>(p.b, k * p.b_stride_k + n, n, p.N, k < p.K);
}

// C[m, n .. n+3]: epilogue per element, one 16-byte store when the row is
// 16-byte aligned (N % 4 == 0; `out` comes from the allocator, 256-byte
// aligned) and all four columns are inside the matrix.
__device__ __forceinline__ void store_output4(const GemmArgs& p, int64_t m, int64_t n, float4 v) {
  if (m >= p.M) return;
  if (p.N % 4 == 0 && n + 3 < p.N) {
    float r[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      if (p.bias != nullptr) r[c] += p.bias[n + c];
      r[c] = apply_activation(p.act, r[c]);
    }
    *reinterpret_cast<float4*>(p.out + m * p.N + n) = make_float4(r[0], r[1], r[2], r[3]);
  } else {
    store_output(p, m, n, v.x);
    store_output(p, m, n + 1, v.y);
    store_output(p, m, n + 2, v.z);
    store_output(p, m, n + 3, v.w);
  }
}

// Whether 16-byte loads are safe for both operands: base pointers 16-byte
// aligned and every row (A's rows; B's rows or W's rows) starting on a
// 16-byte boundary. Otherwise the vector rungs run their scalar-load twin.
inline bool is_16_byte_aligned(const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; }

inline bool operands_allow_vec4(const GemmArgs& p, bool b_col_major) {
  const int64_t b_row_stride = b_col_major ? p.b_stride_n : p.b_stride_k;
  return is_16_byte_aligned(p.a) && is_16_byte_aligned(p.b) && p.a_stride_m % 4 == 0 &&
         b_row_stride % 4 == 0;
}

// The same for a row-major B alone.
inline bool b_allows_vec4(const GemmArgs& p) {
  return is_16_byte_aligned(p.b) && p.b_stride_k % 4 == 0;
}

// 4-byte asynchronous global->shared copy (sm_80+), bypassing registers; with
// `valid` false it writes a zero and reads nothing (src-size 0).
__device__ __forceinline__ void cp_async_4(float* smem_dst, const float* gmem_src, bool valid) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(gmem_src),
               "r"(valid ? 4 : 0));
}

// 16-byte asynchronous copy of `valid_floats` (0-4) floats, zero-filling the
// rest of the 16 bytes; both addresses 16-byte aligned. .cg: cached in L2 only,
// the data is used once from shared memory.
__device__ __forceinline__ void cp_async_16(float* smem_dst, const float* gmem_src,
                                            int valid_floats) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem_src),
               "r"(valid_floats * 4));
}

// The same copies with every byte inside the matrix: no source-size operand,
// so nothing is computed per copy (a register src-size costs ptxas 3-5 integer
// instructions a copy to turn into its zero-fill form).
__device__ __forceinline__ void cp_async_4(float* smem_dst, const float* gmem_src) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(gmem_src));
}

__device__ __forceinline__ void cp_async_16(float* smem_dst, const float* gmem_src) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(gmem_src));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

// Waits until at most `kPending` committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

// B is column-major when its k-stride is 1 (linear's weight [N, K]).
inline bool b_is_col_major(const GemmArgs& p) { return p.b_stride_k == 1 && p.b_stride_n != 1; }

// Calls launch(col_major) with B's layout as a compile-time bool
// (std::integral_constant), so each launcher picks its kernel instantiation in
// one place.
template <typename Launch>
void with_b_layout(const GemmArgs& p, Launch launch) {
  if (b_is_col_major(p)) {
    launch(std::true_type{});
  } else {
    launch(std::false_type{});
  }
}

// Largest gridDim.y. Launchers with a 2-D grid (n tiles, m tiles) cut M into
// chunks of at most this many row tiles, so any M runs.
constexpr int64_t kMaxGridY = 65535;

// Calls launch(chunk) for row chunks of p, each with at most kMaxGridY tiles of
// `tile_rows` rows: a and out advanced to the chunk's first row, M its height.
template <typename Launch>
void for_each_row_chunk(const GemmArgs& p, int64_t tile_rows, Launch launch) {
  const int64_t chunk_rows = kMaxGridY * tile_rows;
  for (int64_t m0 = 0; m0 < p.M; m0 += chunk_rows) {
    GemmArgs chunk = p;
    chunk.a = p.a + m0 * p.a_stride_m;
    chunk.out = p.out + m0 * p.N;
    chunk.M = std::min(chunk_rows, p.M - m0);
    launch(chunk);
  }
}

inline unsigned tiles(int64_t extent, int64_t tile) {
  return static_cast<unsigned>((extent + tile - 1) / tile);
}

}  // namespace memopt
