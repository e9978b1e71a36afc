// Rung 4 of the LayerNorm / RMSNorm ladder: vectorized.
//
// What changed from block_smem: every load and store moves 16 bytes (8
// bf16/fp16 or 4 fp32 elements: LDG.128), so a warp has 512 bytes in flight
// per load instruction instead of 64-128; the row lives in registers
// (kVecs packs a thread: common/pack.cuh's row_vecs; fp32 statistics from
// them), no shared-memory copy; and the threads of a row are sized to the row
// (kThreads of 32 ... 1024 so that each holds at most kVecs packs), with
// several rows a block when a row needs fewer than 128 threads, so narrow
// rows (768-1000) fill blocks too.
// Rows wider than kThreads x kVecs packs re-read the rest from global memory.
//
// Requires row_length % (16 / sizeof(scalar_t)) == 0 and 16-byte aligned x,
// y, weight and bias; the launcher takes block_smem otherwise.
//
// kPackBytes < 16: the same kernel with 8-, 4- or 2-byte packs, for rows whose
// width (or stride, or a pointer) breaks the 16-byte pack but not a narrower
// one: N = 2050 in bf16 reads 4-byte packs, N = 4100 8-byte ones, an odd N
// single elements (norm_narrow_packs.cu picks the widest that fits). A thread
// keeps the same 16 or 32 values (16 / kPackBytes times the packs), so the
// bytes in flight a thread are those of the 16-byte kernel; only the load
// instructions multiply, and a warp's narrow load still covers 64-256
// contiguous bytes (every sector whole). block_smem, which these widths took
// before, reads 2 bytes a thread an instruction with a shared-memory round
// trip (16384 x 2050 rms_norm at 0.70x the best peer, issue 17).
//
// kAdd (the fused add_layer_norm / add_rms_norm): the row is input +
// residual, rounded to scalar_t as `input + residual` would be; the kernel
// writes that sum (its second output) while loading, and normalizes it. One
// pass: 2 reads and 2 writes an element instead of the 3 reads and 2 writes
// of an add kernel followed by the norm. Past the registers it re-reads the
// sum it wrote (each thread its own packs).
//
// kCluster > 1 is rung 5, cluster (Hopper): a row too wide for one block's
// registers (past 32768 elements) is split across the
// kCluster CTAs of a thread-block cluster, each holding its slice in
// registers; each CTA's partial sum (then sum of squares) is published in its
// shared memory and every CTA adds up all of them through distributed shared
// memory after a cluster barrier, in rank order (deterministic). One row a
// cluster, grid (kCluster, rows). Not timed: the benchmark's norm rows stop at
// 12288 columns, where "cluster" runs this kernel without one; tested at 65536
// and 262144 columns.
//
// Expected: near copy speed wherever the grid holds enough rows.
//
// Measured (the norms suite, H200, benchmarks/results/norms_h200.json):
// 16384x4096 layer_norm 93.8% of copy fp32, 87.8% bf16; 4096x12288 fp32 86.4%
// (64% before 8 fp32 packs a thread); the fused add + norm 2.7-4.1 TB/s.
#pragma once

#include <cooperative_groups.h>

#include "common/pack.cuh"
#include "common/register_cap.cuh"
#include "norm/kernels/normalize.cuh"

namespace memopt {

constexpr int kNormThreadElems = 32;      // the most row elements a thread keeps in registers
constexpr int kNormVecMinBlock = 128;     // threads a block at least (several narrow rows)
// Blocks an SM must hold: 64 registers a thread at most. Left to itself
// ptxas gave the fp32 kernels 77-86 registers (24 warps an SM); at 64 they
// keep 24-28 bytes of prologue values on the stack, outside the loops. The
// fused add (kAdd) is left uncapped: at 64 it spilled 104 bytes.
template <int kThreads>
inline constexpr int kNormVecMinBlocksPerSm =
    kMinBlocksAt64Registers<(kThreads < kNormVecMinBlock ? kNormVecMinBlock : kThreads)>;

// The row total from each CTA's total (the same in all its threads): one
// thread publishes it in `slot` of its shared memory, and after a cluster
// barrier every thread adds all kCluster slots through distributed shared
// memory, in rank order.
template <int kCluster>
__device__ __forceinline__ float cluster_total(float cta_total, float* slot) {
  const auto cluster = cooperative_groups::this_cluster();
  if (threadIdx.x == 0) *slot = cta_total;
  cluster.sync();
  float total = 0.f;
#pragma unroll
  for (int r = 0; r < kCluster; ++r) total += *cluster.map_shared_rank(slot, r);
  return total;
}

template <typename scalar_t, typename param_t, bool kRms, int kThreads, bool kAdd = false,
          int kCluster = 1, int kNormVecs = kRowVecs, int kPackBytes = 16>
__global__ void __launch_bounds__(kThreads < kNormVecMinBlock ? kNormVecMinBlock : kThreads,
                                  kAdd ? 1 : kNormVecMinBlocksPerSm<kThreads>)
    norm_vectorized_kernel(const scalar_t* __restrict__ x, const param_t* __restrict__ weight,
                           const param_t* __restrict__ bias, scalar_t* __restrict__ y,
                           int64_t rows, int64_t row_length, int64_t in_stride, float eps,
                           const scalar_t* __restrict__ residual = nullptr,
                           scalar_t* __restrict__ sum_out = nullptr) {
  static_assert(kPackBytes >= static_cast<int>(sizeof(scalar_t)) && 16 % kPackBytes == 0,
                "a pack is 1-8 whole elements of at most 16 bytes");
  constexpr int kVec = kPackBytes / static_cast<int>(sizeof(scalar_t));
  constexpr int kBlock = kThreads < kNormVecMinBlock ? kNormVecMinBlock : kThreads;
  constexpr int kRowsPerBlock = kBlock / kThreads;
  using XPack = Pack<scalar_t, kVec>;
  using PPack = Pack<param_t, kVec>;
  static_assert(kCluster == 1 || kRowsPerBlock == 1, "a cluster splits one row a CTA group");
  __shared__ float scratch[kBlock / 32];
  __shared__ float cta_part[2];  // kCluster > 1: this CTA's sum and sum of squares

  const int t = threadIdx.x % kThreads;
  const int64_t row = kCluster > 1 ? static_cast<int64_t>(blockIdx.y)
                                   : static_cast<int64_t>(blockIdx.x) * kRowsPerBlock +
                                         threadIdx.x / kThreads;
  // Rows past the end still take part in the block's barriers.
  const bool active = row < rows;
  // Pack indices within a row are 32-bit (the launcher sends rows of 2^30
  // packs or more to block_smem); only the row offsets below need 64 bits. With
  // 64-bit pack indices the fp32 kernels took 78-86 registers a thread.
  const int row_packs = active ? static_cast<int>(row_length / kVec) : 0;
  // This CTA's packs of the row, [first, end): all of them, or its rank's slice.
  int rank = 0;
  if constexpr (kCluster > 1) rank = static_cast<int>(cooperative_groups::this_cluster().block_rank());
  const int per_cta = kCluster > 1 ? (row_packs + kCluster - 1) / kCluster : row_packs;
  const int first = kCluster > 1 ? rank * per_cta : 0;
  const int end = kCluster > 1 ? min(row_packs, first + per_cta) : row_packs;
  // Input rows in_stride apart (a multiple of the pack), everything else contiguous.
  const XPack* xr = reinterpret_cast<const XPack*>(x + row * in_stride);
  XPack* yr = reinterpret_cast<XPack*>(y + row * row_length);
  const XPack* rr = kAdd ? reinterpret_cast<const XPack*>(residual + row * row_length) : nullptr;
  XPack* sr = kAdd ? reinterpret_cast<XPack*>(sum_out + row * row_length) : nullptr;
  // kAdd: a + b rounded to scalar_t (as `input + residual`), stored as pack
  // pk of sum_out, in fp32 into v.
  const auto add_pack = [&](int pk, const XPack& a, const XPack& b, float (&v)[kVec]) {
    XPack s;
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      s.v[j] = static_cast<scalar_t>(static_cast<float>(a.v[j]) + static_cast<float>(b.v[j]));
      v[j] = static_cast<float>(s.v[j]);
    }
    sr[pk] = s;
  };
  // Pack pk of the row to normalize, in fp32: x, or x + residual rounded to
  // scalar_t and written to sum_out on the first pass.
  const auto load = [&](int pk, float (&v)[kVec], bool first_pass) {
    const XPack a = kAdd && !first_pass ? sr[pk] : xr[pk];
    if constexpr (kAdd) {
      if (first_pass) return add_pack(pk, a, rr[pk], v);
    }
#pragma unroll
    for (int j = 0; j < kVec; ++j) v[j] = static_cast<float>(a.v[j]);
  };
  const float n = static_cast<float>(row_length);

  float cache[kNormVecs][kVec];
  float sum = 0.f;
  if constexpr (kAdd) {
    // Every load of the cached packs first, then the sums' stores: with each
    // pack's store between its loads and the next pack's (sum_out may alias
    // x as far as the compiler knows), every pack waited out a round trip
    // to memory: 16384 x 4096 bf16 at 82% of copy, 0.89x Liger.
    XPack a[kNormVecs], b[kNormVecs];
#pragma unroll
    for (int k = 0; k < kNormVecs; ++k) {
      const int pk = first + t + k * kThreads;
      if (pk < end) a[k] = xr[pk], b[k] = rr[pk];
    }
#pragma unroll
    for (int k = 0; k < kNormVecs; ++k) {
      const int pk = first + t + k * kThreads;
      if (pk < end) {
        add_pack(pk, a[k], b[k], cache[k]);
      } else {
#pragma unroll
        for (int j = 0; j < kVec; ++j) cache[k][j] = 0.f;
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < kNormVecs; ++k) {
      const int pk = first + t + k * kThreads;
      if (pk < end) {
        load(pk, cache[k], true);
      } else {
#pragma unroll
        for (int j = 0; j < kVec; ++j) cache[k][j] = 0.f;
      }
    }
  }
#pragma unroll
  for (int k = 0; k < kNormVecs; ++k) {
#pragma unroll
    for (int j = 0; j < kVec; ++j) sum += cache[k][j];
  }
  for (int pk = first + kNormVecs * kThreads + t; pk < end; pk += kThreads) {
    float v[kVec];
    load(pk, v, true);
#pragma unroll
    for (int j = 0; j < kVec; ++j) sum += v[j];
  }
  constexpr int kWarpsPerRow = kThreads / 32, kWarps = kBlock / 32;
  float total = group_sum<kWarpsPerRow, kWarps>(sum, scratch);
  if constexpr (kCluster > 1) total = cluster_total<kCluster>(total, &cta_part[0]);
  const float mean = kRms ? 0.f : total / n;

  float sq = 0.f;
#pragma unroll
  for (int k = 0; k < kNormVecs; ++k) {
    const int pk = first + t + k * kThreads;
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      const float d = cache[k][j] - mean;
      if (pk < end) sq += d * d;
    }
  }
  for (int pk = first + kNormVecs * kThreads + t; pk < end; pk += kThreads) {
    float v[kVec];
    load(pk, v, false);
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      const float d = v[j] - mean;
      sq += d * d;
    }
  }
  float sq_total = group_sum<kWarpsPerRow, kWarps>(sq, scratch);
  if constexpr (kCluster > 1) sq_total = cluster_total<kCluster>(sq_total, &cta_part[1]);
  const float inv_std = rsqrtf(sq_total / n + eps);
  // No CTA leaves while a peer may still read its partials.
  if constexpr (kCluster > 1) cooperative_groups::this_cluster().sync();

  const auto write = [&](int pk, const float (&in)[kVec]) {
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
    const int pk = first + t + k * kThreads;
    if (pk < end) write(pk, cache[k]);
  }
  for (int pk = first + kNormVecs * kThreads + t; pk < end; pk += kThreads) {
    float in[kVec];
    load(pk, in, false);
    write(pk, in);
  }
}

}  // namespace memopt
