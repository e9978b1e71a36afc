// The splitk rung: bfloat16 / float16 GEMM for decode shapes (M <= 64 tokens)
// on Hopper (sm_90a). Launcher and the split it picks: gemm/splitk_sm90.cu.
//
// At small M the product is a stream of the weights: N x K x 2 bytes read once
// against 2 x M x N x K FLOP. The square-tile wgmma rung runs 128 x 256 tiles
// (16 blocks at M = 64, N = 4096: 12% of the SMs) and the gemv rung loads
// fragments straight from global memory (it read the weights at 22% of copy
// speed at M = 64). Here:
// - Swapped operands: out^T [N, M] = W [N, K] x^T. The weights are wgmma's
//   A side, 64 rows a block (one m64 warpgroup); the tokens are its N side,
//   kTok = 8, 16, 32 or 64 wide (m64nNk16 exists for every N that is a
//   multiple of 8): M = 1 wastes 7/8 of a narrow instruction, not 255/256 of
//   a 256-wide one.
// - TMA streams both operands into 128-byte-swizzled shared memory through a
//   kStages-deep full/empty mbarrier pipeline: one producer warp (one
//   thread issues), one consumer warpgroup. Several blocks an SM keep
//   kStages x 8 KB of weights each in flight.
// - Split-K across a thread-block cluster: the splits of one 64 x kTok output
//   tile are the CTAs of a cluster (1, splits, 1), splits <= 8. Each CTA
//   leaves its fp32 partial tile in its own shared memory; after a cluster
//   barrier every CTA adds up its slice of the tile from all of them through
//   distributed shared memory, in split order (deterministic), and stores it.
//   No workspace, no counters, no second kernel.
// - Both weight layouts native: linear's W [N, K] is K-major A; gemm's b
//   [K, N] is MN-major A (64 x 64 boxes, wgmma reads it transposed).
//
// Shared memory per CTA: kStages x (8 KB + kTok x 128 B) + 1 KB of alignment.
// kStages is a template parameter for the tuning harness; the launcher's
// choice and its measurements are in gemm/splitk_sm90.cu.
#pragma once

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common/activation.h"
#include "gemm/kernels/half_convert.cuh"
#include "gemm/kernels/wgmma_narrow_ptx.cuh"
#include "gemm/kernels/wgmma_ptx.cuh"

namespace memopt {
namespace splitk {

constexpr int kRows = 64;    // weight rows (outputs n) a block: one m64 warpgroup
constexpr int kBlockK = 64;  // one 128-byte swizzle row of 2-byte elements
constexpr int kThreads = 128 + 32;  // the consumer warpgroup + the producer warp
constexpr int kMaxSplits = 8;       // the portable cluster size
constexpr int kMaxTokTile = 64;     // the widest token tile (m64n64k16)
constexpr int kTileWBytes = kRows * kBlockK * 2;  // 8 KB
// A stage holds kBoxes k-boxes of 64 (kBoxes x 64 k): kBoxes W boxes, then
// kBoxes x boxes.
template <int kTok>
constexpr int x_box_bytes() { return kTok * kBlockK * 2; }
template <int kTok, int kBoxes>
constexpr int stage_bytes() { return kBoxes * (kTileWBytes + x_box_bytes<kTok>()); }
template <int kTok, int kStages, int kBoxes>
constexpr int smem_bytes() { return kStages * stage_bytes<kTok, kBoxes>() + 1024; }
// The partial tile in fp32, token-major: rows of 64 outputs padded to 68
// words, so the 4 tokens x 8 rows a warp writes per store hit 32 different
// banks (68 mod 32 = 4 words apart per token).
constexpr int kRedStride = kRows + 4;
template <int kTok>
constexpr int red_bytes() { return kTok * kRedStride * 4; }
static_assert(red_bytes<64>() <= 2 * stage_bytes<64, 1>(), "the partial tile fits in two stages");

struct Params {
  const void* bias;
  void* out;
  int64_t M, N;
  int k_tiles_per_split;
  int k_tiles;
  Activation act;
};

template <typename T>
using Half = HalfConvert<T>;

template <typename T, int kTok, bool kWKMajor>
__device__ __forceinline__ void mma_k16(float (&acc)[kTok / 2], uint64_t desc_w, uint64_t desc_x) {
  using Mma = sm90::NarrowWgmma<kTok>;
  constexpr int kTransA = kWKMajor ? 0 : 1;
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    Mma::template bf16<kTransA, 0>(acc, desc_w, desc_x, 1);
  } else {
    Mma::template f16<kTransA, 0>(acc, desc_w, desc_x, 1);
  }
}

template <int kRegs>
__device__ __forceinline__ void fence_regs(float (&d)[kRegs]) {
#pragma unroll
  for (int i = 0; i < kRegs; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// grid (row tiles, splits, token tiles); cluster (1, splits, 1) when splits > 1.
// map_w: K-major W [N, K] in 64 x 64 boxes, or MN-major b [K, N] in 64 x 64
// boxes; map_x: x [M, K] in kTok x 64 boxes. p.k_tiles counts stages of
// kBoxes x 64 k.
template <typename T, int kTok, bool kWKMajor, int kStages, int kBoxes>
__global__ void __launch_bounds__(kThreads)
    gemm_splitk_kernel(const __grid_constant__ CUtensorMap map_w,
                       const __grid_constant__ CUtensorMap map_x, Params p) {
  constexpr int kRegs = kTok / 2;
  static_assert(kStages >= 2, "the partial tile reuses two stages");
  extern __shared__ uint8_t smem_raw[];
  __shared__ uint64_t full[kStages], empty[kStages];
  uint8_t* smem = reinterpret_cast<uint8_t*>(
      (reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t{1023});
  constexpr int kStageBytes = stage_bytes<kTok, kBoxes>();
  const auto tile_w = [&](int s, int box) { return smem + s * kStageBytes + box * kTileWBytes; };
  const auto tile_x = [&](int s, int box) {
    return smem + s * kStageBytes + kBoxes * kTileWBytes + box * x_box_bytes<kTok>();
  };

  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * kRows;
  const int split = blockIdx.y, splits = gridDim.y;
  const int64_t m0 = static_cast<int64_t>(blockIdx.z) * kTok;
  const int kt_begin = split * p.k_tiles_per_split;
  const int kt_end = min(p.k_tiles, kt_begin + p.k_tiles_per_split);

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      sm90::mbar_init(&full[s], 1);
      sm90::mbar_init(&empty[s], 4);  // one arrival per consumer warp
    }
    sm90::mbar_fence_init();
  }
  __syncthreads();

  float acc[kRegs];
#pragma unroll
  for (int i = 0; i < kRegs; ++i) acc[i] = 0.f;

  if (threadIdx.x >= 128) {
    // The producer warp: one thread issues the loads.
    if (threadIdx.x == 128) {
      int stage = 0;
      uint32_t phase = 0;
      for (int kt = kt_begin; kt < kt_end; ++kt) {
        sm90::mbar_wait(&empty[stage], phase ^ 1);
        sm90::mbar_arrive_expect_tx(&full[stage], kStageBytes);
#pragma unroll
        for (int box = 0; box < kBoxes; ++box) {
          const int32_t k0 = (kt * kBoxes + box) * kBlockK;
          if constexpr (kWKMajor) {
            sm90::tma_load_2d(tile_w(stage, box), &map_w, k0, static_cast<int32_t>(n0), &full[stage]);
          } else {
            sm90::tma_load_2d(tile_w(stage, box), &map_w, static_cast<int32_t>(n0), k0, &full[stage]);
          }
          sm90::tma_load_2d(tile_x(stage, box), &map_x, k0, static_cast<int32_t>(m0), &full[stage]);
        }
        if (++stage == kStages) stage = 0, phase ^= 1;
      }
    }
    // The warp whole again before the CTA (or cluster) barrier below: its
    // other 31 threads skipped the loop. compute-sanitizer's racecheck saw
    // thread 128's reads of the partial tile unordered with the consumers'
    // writes without it (608 RAW hazards at 1, 2 and 4 splits, H200,
    // 2026-12-02); the barrier's .aligned form asks for a converged warp.
    __syncwarp();
  } else {
    const int t = threadIdx.x;
    int stage = 0;
    uint32_t phase = 0;
    int prev_stage = -1;
    for (int kt = kt_begin; kt < kt_end; ++kt) {
      sm90::mbar_wait(&full[stage], phase);
      fence_regs<kRegs>(acc);
      sm90::wgmma_fence();
#pragma unroll
      for (int step = 0; step < kBoxes * kBlockK / 16; ++step) {
        const int kk = step % (kBlockK / 16);
        const uint32_t w_base = sm90::smem_addr(tile_w(stage, step / (kBlockK / 16)));
        const uint32_t x_base = sm90::smem_addr(tile_x(stage, step / (kBlockK / 16)));
        // K-major: 32 bytes further per k-step inside the 128-byte rows;
        // MN-major W: 16 k-rows of 128 bytes further (one 64-wide box: the
        // leading offset never steps).
        const uint64_t desc_w = kWKMajor
                                    ? sm90::smem_desc_sw128(w_base + kk * 32, 16, 1024)
                                    : sm90::smem_desc_sw128(w_base + kk * 16 * 128, kTileWBytes, 1024);
        const uint64_t desc_x = sm90::smem_desc_sw128(x_base + kk * 32, 16, 1024);
        mma_k16<T, kTok, kWKMajor>(acc, desc_w, desc_x);
      }
      sm90::wgmma_commit();
      sm90::wgmma_wait<1>();
      fence_regs<kRegs>(acc);
      if (prev_stage >= 0 && t % 32 == 0) sm90::mbar_arrive(&empty[prev_stage]);
      prev_stage = stage;
      if (++stage == kStages) stage = 0, phase ^= 1;
    }
    sm90::wgmma_wait<0>();
    fence_regs<kRegs>(acc);
    // Every consumer warp is past its last wgmma (which read the stages)
    // before any writes the partial tile over them.
    sm90::named_barrier_sync(1, 128);
    // acc[4 j + 2 h + c]: weight row 16 (t / 32) + (t % 32) / 4 + 8 h, token
    // 8 j + 2 (t % 4) + c (wgmma's fp32 fragment).
    float* red = reinterpret_cast<float*>(smem);
    const int row = 16 * (t / 32) + (t % 32) / 4;
#pragma unroll
    for (int j = 0; j < kTok / 8; ++j) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          red[(8 * j + 2 * (t % 4) + c) * kRedStride + row + 8 * h] = acc[4 * j + 2 * h + c];
        }
      }
    }
  }

  // Each CTA of the cluster sums 1 / splits of the tile over every split's
  // partial, reading the peers' shared memory; outputs go out row-contiguous
  // (consecutive threads, consecutive n).
  namespace cg = cooperative_groups;
  if (splits > 1) {
    cg::this_cluster().sync();
  } else {
    __syncthreads();
  }
  float* const red = reinterpret_cast<float*>(smem);
  constexpr int kElems = kTok * kRows;
  const int per_cta = (kElems + splits - 1) / splits;
  const int e_end = min(kElems, (split + 1) * per_cta);
  const T* bias = static_cast<const T*>(p.bias);
  T* out = static_cast<T*>(p.out);
  // The consumer warpgroup alone reads the partials back: with the producer
  // warp's threads among the readers racecheck reported RAW hazards across
  // the CTA barrier (64 at 8- and 64-token tiles, H200, 2026-12-02, after its
  // warp reconverged); with the consumers alone, racecheck over sanitize_gemm's
  // splitk cases shows 0 hazards. 128 readers instead of 160 is a fifth more
  // of a short epilogue.
  const int reader = static_cast<int>(threadIdx.x);
  for (int e = split * per_cta + reader; reader < 128 && e < e_end; e += 128) {
    const int tok = e / kRows, r = e % kRows;
    const int64_t m = m0 + tok, n = n0 + r;
    if (m >= p.M || n >= p.N) continue;
    float* const mine = red + tok * kRedStride + r;
    float v = 0.f;
    if (splits > 1) {
      for (int s = 0; s < splits; ++s) v += *cg::this_cluster().map_shared_rank(mine, s);
    } else {
      v = *mine;
    }
    // __ldg: read-only, so not held behind the output stores of the last pass.
    if (bias != nullptr) v += Half<T>::to_float(__ldg(bias + n));
    out[m * p.N + n] = Half<T>::round(apply_activation(p.act, v));
  }
  // No CTA leaves while a peer may still read its shared memory.
  if (splits > 1) cg::this_cluster().sync();
}

}  // namespace splitk
}  // namespace memopt
