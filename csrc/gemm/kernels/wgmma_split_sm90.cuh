// The wgmma_split rung: the wgmma rung's 128 x 256 tile and mainloop
// (wgmma_sm90.cuh) with K split across the CTAs of a thread-block cluster,
// for the shapes where output tiles are fewer than SMs. Launcher and the
// split it takes: gemm/wgmma_split_sm90.cu; the chooser: gemm/gemm_plan.cpp.
//
// Why: at M = 128, N = K = 4096 the output is 16 tiles of 128 x 256, so the
// persistent kernel keeps 16 of 132 SMs busy and streams the 32 MB of
// weights at an eighth of the copy bandwidth (52 us against cuBLAS's 19 us,
// H200). Split 4 ways along K, 64 CTAs each read 1/4 of the weights: 24.4
// us (benchmarks/results/tune/wgmma_split_h200.json).
//
// Structure:
// - grid = tiles x splits, cluster (splits, 1, 1): the CTAs of a cluster
//   share one output tile, CTA `rank` takes k-tiles [rank x kps, (rank + 1)
//   x kps). One tile a cluster, no persistence: the chooser (gemm_plan.cpp)
//   picks a split whose clusters all fit on the GPU at once, one wave.
// - The mainloop is the wgmma rung's: one producer warpgroup issuing TMA
//   loads, two consumer warpgroups of 64 rows, 4 stages of 48 KB.
// - The reduction, deterministic and without a workspace: after its last
//   wgmma each CTA writes its fp32 partial tile over its own stage buffers,
//   the cluster syncs, and CTA `rank` sums rows [rank x 128 / splits, ...)
//   of the tile over every CTA's partial, in rank order, through distributed
//   shared memory, then adds bias, applies the activation and stores. The
//   sum's order never depends on timing: two runs are bit-equal.
// - The partial is row-major, rows kPartialStride = 264 floats apart: the
//   fragment's float2 writes (a half-warp: 4 rows x 4 threads) land on 32
//   distinct banks (264 mod 32 = 8 words a row), and the reduction reads a
//   row as 64 float4 (a warp: 512 contiguous bytes) and stores 4 outputs (8
//   bytes) a thread, a warp 256 contiguous bytes of a row. Against the first
//   version (the partial in fragment order, stored through store_group: 8
//   rows x 16 bytes a warp store) it took the call's fixed cost, one k-tile
//   a split, from 20.8 to 17.9 us at 1 split and 13.6 to 13.2 us at 4 (H200,
//   M = 128, N = 4096): the epilogue is not where that cost goes
//   (docs/perf-notes.md).
#pragma once

#include <cooperative_groups.h>

#include "gemm/kernels/stamps.cuh"
#include "gemm/kernels/wgmma_sm90.cuh"

namespace memopt {
namespace wgmma {

constexpr int kSplitStages = Wide::stages<0>();  // 4 x 48 KB: the partial (132 KB) fits over them
constexpr int kPartialStride = kBlockN + 8;  // floats a partial row (bank spread above)
constexpr int kPartialBytes = kBlockM * kPartialStride * 4;
static_assert(kPartialBytes <= kSplitStages * kStageBytes,
              "the fp32 partial tile fits over the stages");
constexpr int kSplitSmemBytes = kSplitStages * kStageBytes + 1024;
constexpr int kMaxSplits = 8;  // the portable cluster size
constexpr int kColumnGroups = kBlockN / 8;  // 32 groups of 8 columns in a consumer's fragment
constexpr int kQuads = kBlockN / 4;         // a partial row as float4s

// The reduced outputs (row, n .. n + 3) of one CTA: + bias, activation,
// rounded; 8 bytes in one store when all four are in range and the row keeps
// them 8-byte aligned (N % 4 == 0; the output is a fresh contiguous tensor).
template <typename T>
__device__ __forceinline__ void store_quad(const KernelArgs& p, int64_t row, int64_t n, float4 v) {
  if (row >= p.M || n >= p.N) return;
  const T* bias = static_cast<const T*>(p.bias);
  float x[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float b = bias != nullptr && n + i < p.N ? Half<T>::to_float(bias[n + i]) : 0.f;
    x[i] = apply_activation(p.act, x[i] + b);
  }
  T* dst = static_cast<T*>(p.out) + row * p.N + n;
  if (p.N % 4 == 0) {  // n % 4 == 0 too, so all four are in range
    using Pair = typename Half<T>::Pair;
    const Pair lo = Half<T>::round_pair(x[0], x[1]), hi = Half<T>::round_pair(x[2], x[3]);
    uint2 packed;
    packed.x = *reinterpret_cast<const uint32_t*>(&lo);
    packed.y = *reinterpret_cast<const uint32_t*>(&hi);
    *reinterpret_cast<uint2*>(dst) = packed;
  } else {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if (n + i < p.N) dst[i] = Half<T>::round(x[i]);
    }
  }
}

// p.K's k-tiles, kps a CTA: the launcher picks splits so that every CTA of a
// cluster has at least one (splits = ceil(k_tiles / kps)).
template <typename T, bool kBKMajor>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_wgmma_split_kernel(const __grid_constant__ CUtensorMap map_a,
                            const __grid_constant__ CUtensorMap map_b, KernelArgs p, int kps) {
  extern __shared__ uint8_t smem_raw[];
  __shared__ uint64_t full[kSplitStages], empty[kSplitStages];
  uint8_t* smem = reinterpret_cast<uint8_t*>(
      (reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t{1023});
  namespace cg = cooperative_groups;
  const cg::cluster_group cluster = cg::this_cluster();
  const int splits = static_cast<int>(cluster.num_blocks());
  const int rank = static_cast<int>(cluster.block_rank());

  MEMOPT_STAMP(0);
  MEMOPT_STAMP_SM();
  const int warpgroup = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    sm90::prefetch_tensormap(&map_a);
    sm90::prefetch_tensormap(&map_b);
    for (int s = 0; s < kSplitStages; ++s) {
      sm90::mbar_init(&full[s], 1);
      sm90::mbar_init(&empty[s], kConsumers * 4);
    }
    sm90::mbar_fence_init();
  }
  __syncthreads();
  MEMOPT_STAMP(1);

  const int64_t tiles_m = (p.M + kBlockM - 1) / kBlockM;
  const int64_t tiles_n = (p.N + kBlockN - 1) / kBlockN;
  int64_t tm, tn;
  grouped_tile(blockIdx.x / splits, tiles_m, tiles_n, tm, tn);
  const int k_tiles = static_cast<int>((p.K + kBlockK - 1) / kBlockK);
  const int kt_begin = rank * kps;
  const int kt_end = min(k_tiles, kt_begin + kps);
  const int t = threadIdx.x % 128;
  const int consumer = warpgroup - 1;
  float* const partial = reinterpret_cast<float*>(smem);

  if (warpgroup == 0) {
    sm90::setmaxnreg_dec<kProducerRegs>();
    if (threadIdx.x == 0) {
      int stage = 0;
      uint32_t phase = 0;
      load_tile<T, Wide, kBKMajor, 1, kSplitStages>(&map_a, &map_b, smem, full, empty,
                                                 static_cast<int32_t>(tm * kBlockM),
                                                 static_cast<int32_t>(tn * kBlockN), kt_begin,
                                                 kt_end, 0, stage, phase);
      MEMOPT_STAMP(3);
    }
  } else {
    sm90::setmaxnreg_inc<kConsumerRegs>();
    const auto release = [&](int stage) {
      if (t % 32 == 0) sm90::mbar_arrive(&empty[stage]);
    };
    float acc[128];
    int stage = 0;
    uint32_t phase = 0;
    mma_tile<T, Wide, kBKMajor, kSplitStages>(acc, smem, full, consumer, kt_begin, kt_end, stage,
                                              phase, release);
    MEMOPT_STAMP(4);
    // Both consumers' wgmmas have read their last stages before either
    // writes its partial over them (the partials span stages 0-2).
    sm90::named_barrier_sync(1, 128 * kConsumers);
    // acc[4 j + 2 h + c]: row 16 (t / 32) + (t % 32) / 4 + 8 h of this
    // consumer's 64, column 8 j + 2 (t % 4) + c (wgmma's fp32 fragment).
    const int row = consumer * 64 + 16 * (t / 32) + (t % 32) / 4;
#pragma unroll
    for (int j = 0; j < kColumnGroups; ++j) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        *reinterpret_cast<float2*>(partial + (row + 8 * h) * kPartialStride + 8 * j + 2 * (t % 4)) =
            make_float2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
      }
    }
    MEMOPT_STAMP(5);
  }

  // Every CTA's partial is written (the producer warpgroup arrives too).
  cluster.sync();
  MEMOPT_STAMP(6);
  if (warpgroup > 0) {
    const int per_cta = (kBlockM + splits - 1) / splits;
    const int row_end = min(kBlockM, (rank + 1) * per_cta);
    const int tid = threadIdx.x - 128;  // 0 .. 255 over both consumers
    constexpr int kRowsAPass = 128 * kConsumers / kQuads;  // 4
    for (int r = rank * per_cta + tid / kQuads; r < row_end; r += kRowsAPass) {
      const int quad = tid % kQuads;
      const uint32_t mine = sm90::smem_addr(partial + r * kPartialStride + 4 * quad);
      // The splits' loads go out four at a time before their adds (in rank
      // order): four distributed shared-memory loads in flight a thread.
      float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
      for (int s0 = 0; s0 < splits; s0 += 4) {
        float4 v[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          // Past the last split: a valid address read again, never added.
          v[i] = sm90::ld_cluster_f4(sm90::cluster_addr(mine, min(s0 + i, splits - 1)));
        }
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          if (s0 + i < splits) sum.x += v[i].x, sum.y += v[i].y, sum.z += v[i].z, sum.w += v[i].w;
        }
      }
      store_quad<T>(p, tm * kBlockM + r, tn * kBlockN + 4 * quad, sum);
    }
    MEMOPT_STAMP(7);
  }
  // No CTA leaves while a peer may still read its shared memory.
  cluster.sync();
  MEMOPT_STAMP(8);
}

}  // namespace wgmma
}  // namespace memopt
