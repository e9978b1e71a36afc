// Rung 4 of the LayerNorm / RMSNorm ladder: vectorized.
//
// What changed from block_smem: every load and store moves 16 bytes (8
// bf16/fp16 or 4 fp32 elements: LDG.128), so a warp has 512 bytes in flight
// per load instruction instead of 64-128; the row lives in registers
// (kVecs 16-byte packs a thread, fp32 statistics from them), no shared-memory
// copy; and the threads of a row are sized to the row (kThreads of 32 ... 1024
// so that each holds at most kVecs packs), with several rows a block when a
// row needs fewer than 128 threads, so narrow rows (768-1000) fill blocks too.
// Rows wider than kThreads x kVecs packs re-read the rest from global memory.
//
// Requires row_length % (16 / sizeof(scalar_t)) == 0 and 16-byte aligned x,
// y, weight and bias; the launcher takes block_smem otherwise.
//
// kAdd (the fused add_layer_norm / add_rms_norm): the row is input +
// residual, rounded to scalar_t as `input + residual` would be; the kernel
// writes that sum (its second output) while loading, and normalizes it. One
// pass: 2 reads and 2 writes an element instead of the 3 reads and 2 writes
// of an add kernel followed by the norm. Past the registers it re-reads the
// sum it wrote (each thread its own packs).
//
// Expected: near copy speed wherever the grid holds enough rows.
//
// Measured: the norm benchmark (benchmarks/norm_bench.py) on the H200.
#pragma once

#include "common/pack.cuh"
#include "norm/kernels/normalize.cuh"

namespace memopt {

constexpr int kNormVecs = 4;              // 16-byte packs a thread keeps in registers
constexpr int kNormVecMinBlock = 128;     // threads a block at least (several narrow rows)

template <typename scalar_t, typename param_t, bool kRms, int kThreads, bool kAdd = false>
__global__ void __launch_bounds__(kThreads < kNormVecMinBlock ? kNormVecMinBlock : kThreads)
    norm_vectorized_kernel(const scalar_t* __restrict__ x, const param_t* __restrict__ weight,
                           const param_t* __restrict__ bias, scalar_t* __restrict__ y,
                           int64_t rows, int64_t row_length, int64_t in_stride, float eps,
                           const scalar_t* __restrict__ residual = nullptr,
                           scalar_t* __restrict__ sum_out = nullptr) {
  constexpr int kVec = 16 / sizeof(scalar_t);
  constexpr int kBlock = kThreads < kNormVecMinBlock ? kNormVecMinBlock : kThreads;
  constexpr int kRowsPerBlock = kBlock / kThreads;
  using XPack = Pack<scalar_t, kVec>;
  using PPack = Pack<param_t, kVec>;
  __shared__ float scratch[kBlock / 32];

  const int t = threadIdx.x % kThreads;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kThreads;
  // Rows past the end still take part in the block's barriers.
  const bool active = row < rows;
  const int64_t packs = active ? row_length / kVec : 0;
  // Input rows in_stride apart (a multiple of the pack), everything else contiguous.
  const XPack* xr = reinterpret_cast<const XPack*>(x + row * in_stride);
  XPack* yr = reinterpret_cast<XPack*>(y + row * row_length);
  const XPack* rr = kAdd ? reinterpret_cast<const XPack*>(residual + row * row_length) : nullptr;
  XPack* sr = kAdd ? reinterpret_cast<XPack*>(sum_out + row * row_length) : nullptr;
  // Pack pk of the row to normalize, in fp32: x, or x + residual rounded to
  // scalar_t and written to sum_out on the first pass.
  const auto load = [&](int64_t pk, float (&v)[kVec], bool first_pass) {
    const XPack a = kAdd && !first_pass ? sr[pk] : xr[pk];
    if constexpr (kAdd) {
      if (first_pass) {
        const XPack b = rr[pk];
        XPack s;
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          s.v[j] = static_cast<scalar_t>(static_cast<float>(a.v[j]) + static_cast<float>(b.v[j]));
          v[j] = static_cast<float>(s.v[j]);
        }
        sr[pk] = s;
        return;
      }
    }
#pragma unroll
    for (int j = 0; j < kVec; ++j) v[j] = static_cast<float>(a.v[j]);
  };
  const float n = static_cast<float>(row_length);

  float cache[kNormVecs][kVec];
  float sum = 0.f;
#pragma unroll
  for (int k = 0; k < kNormVecs; ++k) {
    const int64_t pk = t + static_cast<int64_t>(k) * kThreads;
    if (pk < packs) {
      load(pk, cache[k], true);
    } else {
#pragma unroll
      for (int j = 0; j < kVec; ++j) cache[k][j] = 0.f;
    }
#pragma unroll
    for (int j = 0; j < kVec; ++j) sum += cache[k][j];
  }
  for (int64_t pk = t + kNormVecs * kThreads; pk < packs; pk += kThreads) {
    float v[kVec];
    load(pk, v, true);
#pragma unroll
    for (int j = 0; j < kVec; ++j) sum += v[j];
  }
  constexpr int kWarpsPerRow = kThreads / 32, kWarps = kBlock / 32;
  const float total = group_sum<kWarpsPerRow, kWarps>(sum, scratch);
  const float mean = kRms ? 0.f : total / n;

  float sq = 0.f;
#pragma unroll
  for (int k = 0; k < kNormVecs; ++k) {
    const int64_t pk = t + static_cast<int64_t>(k) * kThreads;
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      const float d = cache[k][j] - mean;
      if (pk < packs) sq += d * d;
    }
  }
  for (int64_t pk = t + kNormVecs * kThreads; pk < packs; pk += kThreads) {
    float v[kVec];
    load(pk, v, false);
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      const float d = v[j] - mean;
      sq += d * d;
    }
  }
  const float inv_std = rsqrtf(group_sum<kWarpsPerRow, kWarps>(sq, scratch) / n + eps);

  const auto write = [&](int64_t pk, const float (&in)[kVec]) {
    PPack w{}, b{};
    if (weight != nullptr) w = reinterpret_cast<const PPack*>(weight)[pk];
    if (bias != nullptr) b = reinterpret_cast<const PPack*>(bias)[pk];
    XPack out;
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      float v = (in[j] - mean) * inv_std;
      if (weight != nullptr) v *= static_cast<float>(w.v[j]);
      if (bias != nullptr) v += static_cast<float>(b.v[j]);
      out.v[j] = static_cast<scalar_t>(v);
    }
    yr[pk] = out;
  };
#pragma unroll
  for (int k = 0; k < kNormVecs; ++k) {
    const int64_t pk = t + static_cast<int64_t>(k) * kThreads;
    if (pk < packs) write(pk, cache[k]);
  }
  for (int64_t pk = t + kNormVecs * kThreads; pk < packs; pk += kThreads) {
    float in[kVec];
    load(pk, in, false);
    write(pk, in);
  }
}

}  // namespace memopt
