// A ping-pong variant of the wgmma rung (sm_90a), for the tuning harness: the
// two consumer warpgroups own whole 128 x 128 output tiles in turn instead of
// sharing one 128 x 256 tile (wgmma_sm90.cuh, "cooperative"). While one runs
// its main loop the other runs its epilogue, so the tensor cores do not idle
// through epilogues (ncu at 4096^3: both cooperative consumers stop together
// for the epilogue of every tile).
//
// - Tile 128 x 128 x 64, kStages = 5 stages of 32 KB (A 16 KB + B 16 KB), and
//   32 KB of output staging per consumer (four 64 x 64 swizzled boxes, TMA
//   stores): 225 KB, one block an SM.
// - The producer loads the block's tiles in order, each tile's k-tiles in
//   order, into one ring of stages; tile j of the block belongs to consumer
//   j % 2, which finds its stages by the ring position j x k_tiles + kt.
// - Order: consumer c starts the main loop of its next tile only after the
//   other consumer has finished the main loop before it (mbarrier `turn[c]`).
//   That keeps the main loops one after the other, and it keeps every
//   consumer within one phase of the ring it waits on, as the parity waits
//   of mbarriers require.
// - Per k16 step a consumer issues two m64n128k16 (rows 0-63 and 64-127 of its
//   tile): 128 fp32 accumulators a thread, as in the cooperative kernel.
// - Needs N % 8 == 0 and a 16-byte aligned output (the TMA store); the
//   launcher falls back to the cooperative kernel otherwise.
#pragma once

#include "gemm/kernels/wgmma_narrow_ptx.cuh"
#include "gemm/kernels/wgmma_sm90.cuh"

namespace memopt {
namespace wgmma_pingpong {

using wgmma::Half;
using wgmma::KernelArgs;

constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 64;
constexpr int kStages = 5;
constexpr int kThreads = 384;  // producer + two consumer warpgroups
constexpr int kTileBytes = 128 * kBlockK * 2;  // A or B: 16 KB
constexpr int kStageBytes = 2 * kTileBytes;
constexpr int kBoxBytes = 64 * 64 * 2;        // 8 KB
constexpr int kCBytes = 4 * kBoxBytes;        // one consumer's 128 x 128 outputs
constexpr int kSmemBytes = kStages * kStageBytes + 2 * kCBytes + 1024;
static_assert(kSmemBytes <= 227 * 1024, "5 stages and two output stagings fit");

template <typename T, bool kBKMajor>
__device__ __forceinline__ void mma_k16(float (&acc)[64], uint64_t desc_a, uint64_t desc_b,
                                        int scale_d) {
  using Mma = sm90::NarrowWgmma<128>;
  constexpr int kTransB = kBKMajor ? 0 : 1;
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    Mma::template bf16<0, kTransB>(acc, desc_a, desc_b, scale_d);
  } else {
    Mma::template f16<0, kTransB>(acc, desc_a, desc_b, scale_d);
  }
}

__device__ __forceinline__ void fence64(float (&d)[64]) {
#pragma unroll
  for (int i = 0; i < 64; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// One consumer's 128 x 128 tile out through its staging boxes: box 2 rh + ch
// holds rows 64 rh.., columns 64 ch... `fresh`: no store of this consumer is
// pending yet.
template <typename T, Activation kAct>
__device__ __forceinline__ void store_tile(const KernelArgs& p, const CUtensorMap* map_out,
                                           const float (&acc0)[64], const float (&acc1)[64],
                                           uint8_t* c_smem, int64_t m0, int64_t n0, int t,
                                           int barrier_id, bool fresh) {
  if (!fresh) {
    if (t == 0) sm90::bulk_wait_read<0>();
    sm90::named_barrier_sync(barrier_id, 128);
  }
  const T* bias = static_cast<const T*>(p.bias);
  const int row0 = 16 * (t / 32) + (t % 32) / 4;
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    const int col = 8 * j + 2 * (t % 4);
    const int64_t n = n0 + col;
    const float b0 = bias != nullptr && n < p.N ? Half<T>::to_float(bias[n]) : 0.f;
    const float b1 = bias != nullptr && n + 1 < p.N ? Half<T>::to_float(bias[n + 1]) : 0.f;
    const int ch = col / 64, in_box = col % 64;
#pragma unroll
    for (int rh = 0; rh < 2; ++rh) {
      const float(&acc)[64] = rh == 0 ? acc0 : acc1;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        wgmma::stage_pair<T, kAct>(c_smem + (2 * rh + ch) * kBoxBytes, row0 + 8 * h, in_box,
                                   acc[4 * j + 2 * h] + b0, acc[4 * j + 2 * h + 1] + b1);
      }
    }
  }
  sm90::fence_proxy_async_smem();
  sm90::named_barrier_sync(barrier_id, 128);
  if (t == 0) {
#pragma unroll
    for (int box = 0; box < 4; ++box) {
      sm90::tma_store_2d(map_out, static_cast<int32_t>(n0 + (box % 2) * 64),
                         static_cast<int32_t>(m0 + (box / 2) * 64), c_smem + box * kBoxBytes);
    }
    sm90::bulk_commit();
  }
}

// map_a: A [M, K] in 128 x 64 boxes; map_b: W [N, K] in 128 x 64 boxes
// (K-major) or b [K, N] in 64 x 64 boxes (MN-major); map_out: out [M, N] in
// 64 x 64 boxes.
template <typename T, bool kBKMajor>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_pingpong_kernel(const __grid_constant__ CUtensorMap map_a,
                         const __grid_constant__ CUtensorMap map_b,
                         const __grid_constant__ CUtensorMap map_out, KernelArgs p) {
  extern __shared__ uint8_t smem_raw[];
  __shared__ uint64_t full[kStages], empty[kStages], turn[2];
  uint8_t* smem = reinterpret_cast<uint8_t*>(
      (reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t{1023});
  const auto tile_a = [&](int s) { return smem + s * kStageBytes; };
  const auto tile_b = [&](int s) { return smem + s * kStageBytes + kTileBytes; };

  const int warpgroup = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      sm90::mbar_init(&full[s], 1);
      sm90::mbar_init(&empty[s], 4);  // the 4 warps of the consumer that owns the stage
    }
    sm90::mbar_init(&turn[0], 1);
    sm90::mbar_init(&turn[1], 1);
    sm90::mbar_fence_init();
  }
  __syncthreads();

  const int64_t tiles_m = (p.M + kBlockM - 1) / kBlockM;
  const int64_t tiles_n = (p.N + kBlockN - 1) / kBlockN;
  const int64_t num_tiles = tiles_m * tiles_n;
  const int k_tiles = static_cast<int>((p.K + kBlockK - 1) / kBlockK);

  if (warpgroup == 0) {
    sm90::setmaxnreg_dec<wgmma::kProducerRegs>();
    if (threadIdx.x == 0) {
      int stage = 0;
      uint32_t phase = 0;
      for (int64_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
        int64_t tm, tn;
        grouped_tile(tile, tiles_m, tiles_n, tm, tn);
        const int32_t m0 = static_cast<int32_t>(tm * kBlockM);
        const int32_t n0 = static_cast<int32_t>(tn * kBlockN);
        for (int kt = 0; kt < k_tiles; ++kt) {
          sm90::mbar_wait(&empty[stage], phase ^ 1);
          sm90::mbar_arrive_expect_tx(&full[stage], kStageBytes);
          const int32_t k0 = kt * kBlockK;
          sm90::tma_load_2d(tile_a(stage), &map_a, k0, m0, &full[stage]);
          if constexpr (kBKMajor) {
            sm90::tma_load_2d(tile_b(stage), &map_b, k0, n0, &full[stage]);
          } else {
            sm90::tma_load_2d(tile_b(stage), &map_b, n0, k0, &full[stage]);
            sm90::tma_load_2d(tile_b(stage) + kBoxBytes, &map_b, n0 + 64, k0, &full[stage]);
          }
          if (++stage == kStages) stage = 0, phase ^= 1;
        }
      }
    }
  } else {
    sm90::setmaxnreg_inc<wgmma::kConsumerRegs>();
    const int consumer = warpgroup - 1;
    const int t = threadIdx.x % 128;
    uint8_t* const c_smem = smem + kStages * kStageBytes + consumer * kCBytes;
    float acc0[64], acc1[64];
    uint32_t turn_phase = 0;
    bool fresh = true;
    for (int64_t j = consumer;; j += 2) {
      const int64_t tile = blockIdx.x + j * gridDim.x;
      if (tile >= num_tiles) break;
      // The other consumer's main loop of tile j - 1 is done (tile 0 waits
      // for no one).
      if (j > 0) {
        sm90::mbar_wait(&turn[consumer], turn_phase);
        turn_phase ^= 1;
      }
      int64_t tm, tn;
      grouped_tile(tile, tiles_m, tiles_n, tm, tn);
      const int64_t first = j * k_tiles;  // ring position of this tile's first k-tile
      int stage = static_cast<int>(first % kStages);
      uint32_t phase = static_cast<uint32_t>((first / kStages) & 1);
      int prev_stage = -1;
      for (int kt = 0; kt < k_tiles; ++kt) {
        sm90::mbar_wait(&full[stage], phase);
        const uint32_t a_base = sm90::smem_addr(tile_a(stage));
        const uint32_t b_base = sm90::smem_addr(tile_b(stage));
        fence64(acc0);
        fence64(acc1);
        sm90::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kBlockK / 16; ++kk) {
          const uint64_t desc_a0 = sm90::smem_desc_sw128(a_base + kk * 32, 16, 1024);
          const uint64_t desc_a1 = sm90::smem_desc_sw128(a_base + 64 * 128 + kk * 32, 16, 1024);
          const uint64_t desc_b = kBKMajor
                                      ? sm90::smem_desc_sw128(b_base + kk * 32, 16, 1024)
                                      : sm90::smem_desc_sw128(b_base + kk * 16 * 128, kBoxBytes, 1024);
          const int scale_d = (kt > 0 || kk > 0) ? 1 : 0;
          mma_k16<T, kBKMajor>(acc0, desc_a0, desc_b, scale_d);
          mma_k16<T, kBKMajor>(acc1, desc_a1, desc_b, scale_d);
        }
        sm90::wgmma_commit();
        sm90::wgmma_wait<1>();
        fence64(acc0);
        fence64(acc1);
        if (prev_stage >= 0 && t % 32 == 0) sm90::mbar_arrive(&empty[prev_stage]);
        prev_stage = stage;
        if (++stage == kStages) stage = 0, phase ^= 1;
      }
      sm90::wgmma_wait<0>();
      fence64(acc0);
      fence64(acc1);
      if (t % 32 == 0) sm90::mbar_arrive(&empty[prev_stage]);
      // Hand the tensor cores to the other consumer, then store.
      if (t == 0) sm90::mbar_arrive(&turn[1 - consumer]);
      with_activation(p.act, [&](auto act) {
        store_tile<T, decltype(act)::value>(p, &map_out, acc0, acc1, c_smem, tm * kBlockM,
                                            tn * kBlockN, t, 1 + consumer, fresh);
      });
      fresh = false;
    }
    if (t == 0) sm90::bulk_wait<0>();
  }
}

}  // namespace wgmma_pingpong
}  // namespace memopt
