// The wgmma rung: bf16 / fp16 GEMM on Hopper's tensor cores (sm_90a).
//
// What changes from a mma.sync kernel: the copy engine (TMA) moves whole
// 128x64 and 256x64 operand tiles from HBM into 128-byte-swizzled shared
// memory with one instruction from one thread, and wgmma reads both operands
// straight from shared memory (no ldmatrix, no register fragments of A or B):
// a warpgroup of 128 threads issues one m64n256k16 instruction for 524,288
// FMAs. Registers hold only the fp32 accumulators.
//
// Structure:
// - Block tile 128 x 256 (64 x 64 to 128 x 256: Tile below; gemm_plan.cpp
//   picks one a shape), k-tile 64, as many shared-memory stages as fit: 128
//   x 256 has 3-4 of 48 KB (A 16 KB + B 32 KB), 64 x 64 13 of 16 KB. One
//   block per SM.
// - Warp specialization: warpgroup 0 is the producer (one thread issues the
//   TMA loads, gated by an `empty` mbarrier per stage); the other one or two
//   are consumers, each owning 64 rows of the tile (m64nN per wgmma, N / 2
//   accumulators a thread), gated by a `full` mbarrier per stage that the TMA
//   bytes complete; each consumer warp arrives on `empty` when done reading.
//   With two consumers setmaxnreg moves registers from the producer (40) to
//   them (232).
// - Pipelining: a consumer keeps one k-tile of wgmmas in flight
//   (wait_group 1) and frees the stage of the k-tile before it.
// - Persistent grid: one block per SM walks output tiles id, id + grid, ...
//   in groups of tile-rows (KernelArgs::group_rows) so concurrent blocks share
//   A and B in L2.
//   The producer runs ahead into the next tile while consumers store.
// - Both B layouts native: linear's weight W [N, K] is K-major (one 256x64
//   box); gemm's b [K, N] is MN-major (four 64x64 boxes, wgmma reads it
//   transposed). Tails: TMA fills out-of-bounds rows and k with zeros; the
//   epilogue masks its stores. The 128 x 168 tile takes the K-major layout
//   only (168 is no multiple of the 64-column boxes).
// - Epilogue: + bias, activation in fp32, rounded to the dtype, written into
//   swizzled shared memory and stored by TMA (store_tile_tma), 3 stages then;
//   or, where the output's rows break TMA's 16-byte rule (N % 8 != 0), stored
//   from registers (store_tile, two elements a store), 4 stages. The TMA store
//   took 4096^3 from 0.77-0.82x to 0.87-1.03x cuBLAS: the register stores
//   write 8 rows x 16 bytes per warp instruction, half-sector writes that
//   both consumers issue while the tensor cores idle.
//
// - tf32 (T = float, the wgmma_tf32 rung): 32-element k-tiles (the same 128
//   bytes a row), m64nNk8.tf32, B K-major only, the epilogue from registers.
//
// Arithmetic: per k-tile a block moves 48 KB for 2 x 128 x 256 x 64 = 4.2
// MFLOP: 87 FLOP per byte of shared memory filled; from HBM, A and B tiles are
// re-read by the other blocks of their row / column (L2 absorbs most).
//
// Measured (H200): benchmarks/results/tensor-core_h200.json; the variants
// (register epilogue, 2 staged boxes with 4 stages, 2-CTA multicast) in
// docs/perf-notes.md.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common/activation.h"
#include "common/cp_async.cuh"
#include "gemm/kernels/half_convert.cuh"
#include "gemm/kernels/stamps.cuh"
#include "gemm/kernels/stream_k.cuh"
#include "gemm/kernels/tile_order.cuh"
#include "gemm/kernels/wgmma_narrow_ptx.cuh"
#include "gemm/kernels/wgmma_ptx.cuh"

namespace memopt {
namespace wgmma {

constexpr int kBlockK = 64;
constexpr int kElemBytes = 2;
constexpr int kProducerRegs = 40, kConsumerRegs = 232;
// The epilogue stages a consumer's outputs for TMA stores as boxes of 64
// rows (Tile::kOutBoxCols says how wide and whether swizzled), kStaged of
// them at once; kStaged = 0 is the epilogue straight from registers.
// For MN-major B: 64-column boxes, each 64 k-rows of 128 bytes.
constexpr int kBoxN = 64;
constexpr int kBoxBytes = kBoxN * kBlockK * kElemBytes;  // 8 KB
// Hopper gives a block at most 227 KB of shared memory, static included; 1 KB
// of the dynamic part aligns the stages to 1024 bytes (the 128-byte swizzle's
// atom) and 256 bytes are left for the static mbarriers.
constexpr int kSmemLimit = 227 * 1024, kAlignSlack = 1024, kBarrierBytes = 256;
static_assert(kBlockK * kElemBytes == 128, "a k-tile row is one 128-byte swizzle row");
// A k-tile in elements of T: one 128-byte swizzle row, 64 in 16-bit types and
// 32 in float32 (the tf32 path). Stages hold the same bytes either way, and
// each of a k-tile's four wgmma k-steps reads 32 bytes of a row (k16 in
// 16-bit types, k8 in tf32).
template <typename T>
constexpr int kBlockKOf = 128 / static_cast<int>(sizeof(T));
constexpr int kKSteps = 4;

// An output tile of kBM x kBN: kBM / 64 consumer warpgroups of 64 rows each
// (m64 wgmma), kBN / 2 fp32 accumulators a consumer thread. What binds each
// shape: 128 x 256, the registers (128 accumulators, 232 a thread after
// setmaxnreg) and shared memory (3-4 stages of 48 KB); the smaller tiles,
// the tile count at medium M (M = 128, N = 4096: 16 tiles of 128 x 256, 128
// of 64 x 64), traded against re-reads of A and B (a 64 x 64 tile moves 16
// KB a k-tile for 0.5 MFLOP, 128 x 256 48 KB for 4.2); the 192-column tiles,
// the wave count where 128 or 256 columns leave a last wave mostly idle (M =
// 256, N = 12288: 384 tiles of 128 x 64 are 2.9 waves of 132 SMs, 128 tiles
// of 128 x 192 one); 128 x 168, likewise at N = 22016 (Llama-2's gate_up:
// 132 tile columns, so M = 256 / 512 fill exactly 2 / 4 waves, where 128 x
// 192's 115 columns give 1.74 waves at 256). 168 columns are 21 eight-row
// atoms of the 128-byte swizzle for K-major B, but not a multiple of the
// 64-column boxes that row-major B loads in: linear's weight only (the
// kernel asserts it; gemm_plan.cpp's wgmma_tile never picks it otherwise).
template <int kBM, int kBN>
struct Tile {
  static_assert(kBM == 64 || kBM == 128, "one or two consumer warpgroups of 64 rows");
  static_assert(kBN == 64 || kBN == 128 || kBN == 192 || kBN == 256 || (kBN == 168 && kBM == 128),
                "wgmma n64 / n128 / n192 / n256, and n168 at 128 rows");
  static constexpr int kBlockM = kBM, kBlockN = kBN;
  static constexpr int kConsumers = kBM / 64;
  static constexpr int kThreads = 128 * (1 + kConsumers);  // + the producer warpgroup
  static constexpr int kAcc = kBN / 2;
  // Row-major B loads in 64-column boxes (load_tile), and there is no tf32
  // m64n168: a tile of another width takes linear's K-major weight in bf16 /
  // fp16 only (the launch path instantiates nothing else for it).
  static constexpr bool kKMajor16BitOnly = kBN % 64 != 0;
  // The TMA-store epilogue's boxes, each 64 rows (a consumer's) by
  // kOutBoxCols: 64 columns, 128-byte swizzled like the loads; at 168
  // columns three boxes of 56, unswizzled (112-byte rows are no swizzle
  // width; 112 bytes = 28 banks, so the 8 rows a warp writes a store still
  // start in 8 different 4-bank groups: no conflict).
  static constexpr int kOutBoxCols = kBN % 64 == 0 ? 64 : 56;
  static_assert(kBN % kOutBoxCols == 0, "whole output boxes");
  static constexpr bool kOutSwizzled = kOutBoxCols == 64;
  static constexpr int kOutBoxes = kBN / kOutBoxCols;  // boxes of a consumer's 64 rows
  static constexpr int kOutBoxBytes = 64 * kOutBoxCols * kElemBytes;  // 8 KB; 7 KB at 56
  static constexpr int kTileABytes = kBM * kBlockK * kElemBytes;
  static constexpr int kTileBBytes = kBN * kBlockK * kElemBytes;
  static constexpr int kStageBytes = kTileABytes + kTileBBytes;
  // As many stages as fit beside kStaged staging boxes a consumer: 128 x 256
  // gets 3 (four boxes) or 4; 128 x 192 4; 128 x 168 4 (37 KB each beside
  // 42 KB of boxes; 6 with the epilogue from registers); 128 x 128 6; 64 x
  // 192 6; 128 x 64 8; 64 x 64 13 (the stage counts cuBLAS's H200 kernels
  // use at these tiles, from their names).
  // Tiles of more than 96 accumulators a thread take their bias through
  // shared memory (stage_bias): two buffers of a tile's pairs a consumer, 4
  // bytes an element (float32's tf32 path), so a tile's copy can land while
  // the consumer still reads the tile before. 4 KB at 128 x 256, within what
  // the stages left over (their counts do not change; asserted below).
  static constexpr int kBiasBytes = kBN / 2 > 96 ? 2 * kConsumers * kBN * 4 : 0;
  template <int kStaged>
  static constexpr int stages() {
    return (kSmemLimit - kAlignSlack - kBarrierBytes - kConsumers * kStaged * kOutBoxBytes -
            kBiasBytes) /
           kStageBytes;
  }
  // Where the bias buffers start in the dynamic shared memory: after the
  // stages and the staging boxes.
  template <int kStaged>
  static constexpr int bias_offset() {
    return stages<kStaged>() * kStageBytes + kConsumers * kStaged * kOutBoxBytes;
  }
  template <int kStaged>
  static constexpr int smem_bytes() {
    return bias_offset<kStaged>() + kBiasBytes + kAlignSlack;
  }
  static_assert(stages<0>() >= 3, "at least three stages in flight");
  static_assert(kProducerRegs * 128 + kConsumerRegs * 128 * kConsumers <= 65536,
                "the register budget after setmaxnreg fits the SM's 64K registers");
};

// The wgmma_split rung's tile (kernels/wgmma_split_sm90.cuh).
using Wide = Tile<128, 256>;
constexpr int kBlockM = Wide::kBlockM, kBlockN = Wide::kBlockN;
constexpr int kConsumers = Wide::kConsumers, kThreads = Wide::kThreads;
constexpr int kTileABytes = Wide::kTileABytes, kStageBytes = Wide::kStageBytes;
static_assert(Wide::stages<4>() == 3 && Wide::stages<0>() == 4,
              "128 x 256: 3 stages beside four staged boxes, 4 without");
static_assert(Tile<64, 256>::stages<4>() == 4 && Tile<64, 256>::stages<0>() == 5,
              "64 x 256: the bias buffers cost no stage");
static_assert(Tile<128, 168>::stages<3>() == 4 && Tile<128, 168>::stages<0>() == 6,
              "128 x 168: 4 stages beside three 56-column boxes a consumer, 6 without");
static_assert(Tile<128, 168>::kBiasBytes == 0, "128 x 168: 84 accumulators, the bias in registers");

template <typename T>
using Half = HalfConvert<T>;

struct KernelArgs {
  void* out;
  const void* bias;
  int64_t M, N, K;
  Activation act;
  // Stream-K only (kStreamK): the last sk_units tiles are split by k-tiles
  // over the grid, their partials fixed up through `ws` (kernels/stream_k.cuh).
  int64_t sk_units = 0;
  stream_k::Workspace ws = {nullptr, nullptr};
  // Tile-rows a group of the tile order (kernels/tile_order.cuh): the plan's
  // (gemm_plan.h's wgmma_group_rows).
  int group_rows = kGroupRows;
};

// One k-step of wgmma: m64nNk16 in bfloat16 / float16, m64nNk8 in tf32.
template <typename T, bool kBKMajor, int kAcc>
__device__ __forceinline__ void wgmma_step(float (&acc)[kAcc], uint64_t desc_a, uint64_t desc_b,
                                           int scale_d) {
  constexpr int kTrans = kBKMajor ? 0 : 1;
  constexpr bool kBf16 = std::is_same_v<T, __nv_bfloat16>;
  if constexpr (std::is_same_v<T, float>) {
    static_assert(kBKMajor, "tf32 wgmma reads both operands K-major");
    if constexpr (kAcc == 128) {
      sm90::wgmma_m64n256k8_tf32(acc, desc_a, desc_b, scale_d);
    } else {
      sm90::NarrowWgmma<2 * kAcc>::tf32(acc, desc_a, desc_b, scale_d);
    }
  } else if constexpr (kAcc == 128) {
    if constexpr (kBf16) {
      sm90::wgmma_m64n256k16_bf16<kTrans>(acc, desc_a, desc_b, scale_d);
    } else {
      sm90::wgmma_m64n256k16_f16<kTrans>(acc, desc_a, desc_b, scale_d);
    }
  } else if constexpr (kBf16) {
    sm90::NarrowWgmma<2 * kAcc>::template bf16<0, kTrans>(acc, desc_a, desc_b, scale_d);
  } else {
    sm90::NarrowWgmma<2 * kAcc>::template f16<0, kTrans>(acc, desc_a, desc_b, scale_d);
  }
}

// The bias of columns n and n + 1 (n even) as a pair, zeros past N or without
// a bias: one 4- or 8-byte read-only load where the bias is aligned for it,
// two otherwise.
template <typename T>
__device__ __forceinline__ typename Half<T>::Pair load_bias_pair(const KernelArgs& p, int64_t n) {
  using Pair = typename Half<T>::Pair;
  const T* bias = static_cast<const T*>(p.bias);
  Pair pair = Half<T>::round_pair(0.f, 0.f);
  if (bias == nullptr || n >= p.N) return pair;
  if (n + 1 < p.N && reinterpret_cast<uintptr_t>(bias) % sizeof(Pair) == 0) {
    return __ldg(reinterpret_cast<const Pair*>(bias + n));
  }
  pair.x = __ldg(bias + n);
  if (n + 1 < p.N) pair.y = __ldg(bias + n + 1);
  return pair;
}

// A consumer thread's bias for one tile: the pair of each of its kAcc / 4
// column groups (n0 + 8 j + 2 (t % 4), + 1), one 4-byte register each in
// 16-bit types. Read in the epilogue, between the staging stores that the
// compiler must assume may alias it, the loads went one at a time: 48 round
// trips a 64 x 192 tile, +2 us at 512 x 2304 x 768 and +12 us (128 x 256,
// register epilogue) at BERT's 512 x 30522 x 768 head (H200,
// sweep_wgmma_tiles.py --bias). So they are issued together: where the
// registers allow (kEarly) all of them before the tile's mainloop, which
// hides their round trip behind the k-tiles. Not at kAcc = 128 (x 256
// tiles): 32 bias registers beside the 128 accumulators, loaded before the
// mainloop or right after it, made ptxas spill 8-130 bytes in the TMA-store
// instances (82 at the stream-K 128 x 256 with a pass's 32 loaded at once).
// There stage_bias copies the tile's pairs into shared memory with cp.async
// as its mainloop starts, and the epilogue loads a box's 8 pairs from there
// (`staged`). Until 2026-12-05 it loaded them from global memory at each
// box's start, a round trip in the epilogue with the tensor cores idle: at
// 4096 x 3072 x 768 + bias (BERT's up-projection) 128 x 256 took 43.4 us
// against 36.5 without a bias (H100), where 128 x 192, whose bias is early,
// took 39.0.
template <typename T, int kAcc>
struct TileBias {
  static constexpr bool kEarly = kAcc <= 96;
  using Pair = typename Half<T>::Pair;
  Pair pair[kAcc / 4];
  const Pair* staged = nullptr;  // !kEarly: the tile's pairs in shared memory (stage_bias)

  // The pairs of column groups [j0, j0 + kCount).
  template <int kCount = kAcc / 4>
  __device__ __forceinline__ void load(const KernelArgs& p, int64_t n0, int t, int j0 = 0) {
#pragma unroll
    for (int j = j0; j < j0 + kCount; ++j) {
      if constexpr (kEarly) {
        pair[j] = load_bias_pair<T>(p, n0 + 8 * j + 2 * (t % 4));
      } else {
        pair[j] = staged[4 * j + t % 4];  // column group j's pair of this thread
      }
    }
  }
  __device__ __forceinline__ float first(int j) const { return Half<T>::to_float(pair[j].x); }
  __device__ __forceinline__ float second(int j) const { return Half<T>::to_float(pair[j].y); }
};

// Copies a tile's bias pairs (columns n0 .. n0 + 2 kPairs) into `buf` in
// shared memory, one cp.async a pair: no register holds them through the
// mainloop (32 such registers beside 128 accumulators made ptxas spill).
// Only whole pairs inside the bias are copied (memcheck counts a cp.async's
// whole size as read, whatever its source size: common/cp_async.cuh); the
// last pair of an odd N, pairs past N, a missing bias (zeros) and a bias not
// aligned to a pair (a view at an odd element) go through load_bias_pair and
// a shared store, with their round trip at the tile's start. The caller
// waits (cp_async_wait_all) and syncs its consumer's threads before the
// epilogue reads `buf`.
template <typename T, int kPairs>
__device__ __forceinline__ void stage_bias(const KernelArgs& p, typename Half<T>::Pair* buf,
                                           int64_t n0, int t) {
  using Pair = typename Half<T>::Pair;
  const T* bias = static_cast<const T*>(p.bias);
  const bool copies = bias != nullptr && reinterpret_cast<uintptr_t>(bias) % sizeof(Pair) == 0;
#pragma unroll
  for (int i = t; i < kPairs; i += 128) {
    const int64_t n = n0 + 2 * i;
    if (copies && n + 1 < p.N) {
      cp_async_small_to_shared<sizeof(Pair)>(buf + i, bias + n);
    } else {
      buf[i] = load_bias_pair<T>(p, n);
    }
  }
}

// Stores one column group of wgmma's fp32 fragment with bias and activation:
// (v0, v1) at (row, n), (row, n + 1) and (v2, v3) at row + 8; masked at M
// and N. n is even, so pairs go out as one 4-byte store when the rows keep
// them 4-byte aligned (N even).
template <typename T, Activation kAct>
__device__ __forceinline__ void store_group(const KernelArgs& p, int64_t row, int64_t n, float v0,
                                            float v1, float v2, float v3, float b0, float b1) {
  if (n >= p.N) return;
  T* out = static_cast<T*>(p.out);
  const bool second = n + 1 < p.N;
  const float lo[2] = {v0, v2}, hi[2] = {v1, v3};
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int64_t m = row + 8 * h;
    if (m >= p.M) continue;
    const float x0 = activate<kAct>(lo[h] + b0);
    const float x1 = activate<kAct>(hi[h] + b1);
    T* dst = out + m * p.N + n;
    if (p.N % 2 == 0 && second) {
      *reinterpret_cast<typename Half<T>::Pair*>(dst) = Half<T>::round_pair(x0, x1);
    } else {
      dst[0] = Half<T>::round(x0);
      if (second) dst[1] = Half<T>::round(x1);
    }
  }
}

// Stores a consumer's 64 x (2 kAcc) accumulators (its rows of the tile) with
// bias and activation. wgmma's fp32 fragment: thread t of the warpgroup
// holds, for each j < kAcc / 4, rows 16 (t / 32) + (t % 32) / 4 (+ 8) and
// columns 8 j + 2 (t % 4) (+ 1), in acc[4 j .. 4 j + 3].
template <typename T, Activation kAct, int kAcc>
__device__ __forceinline__ void store_tile(const KernelArgs& p, const float (&acc)[kAcc],
                                           TileBias<T, kAcc>& bias, int64_t m0, int64_t n0, int t) {
  if constexpr (!TileBias<T, kAcc>::kEarly) bias.load(p, n0, t);
  const int64_t row = m0 + 16 * (t / 32) + (t % 32) / 4;
#pragma unroll
  for (int j = 0; j < kAcc / 4; ++j) {
    store_group<T, kAct>(p, row, n0 + 8 * j + 2 * (t % 4), acc[4 * j], acc[4 * j + 1],
                         acc[4 * j + 2], acc[4 * j + 3], bias.first(j), bias.second(j));
  }
}

// Writes act(v0 + b0), act(v1 + b1), rounded, as the pair at (row, col) of
// a 64 x kBoxCols box of 2-byte elements. 64 columns: in TMA's 128-byte
// swizzle, the 16-byte chunk index XOR row % 8, so the 8 rows a warp writes
// per store land in 8 different bank groups. 56 columns: dense rows of 112
// bytes (Tile::kOutBoxCols says why no swizzle). col is even.
template <typename T, Activation kAct, int kBoxCols>
__device__ __forceinline__ void stage_pair(uint8_t* box, int row, int col, float v0, float v1) {
  static_assert(kBoxCols == 64 || kBoxCols == 56, "Tile::kOutBoxCols");
  uint8_t* dst;
  if constexpr (kBoxCols == 64) {
    const int chunk = (col / 8) ^ (row % 8);
    dst = box + row * 128 + chunk * 16 + (col % 8) * 2;
  } else {
    dst = box + row * (kBoxCols * kElemBytes) + col * kElemBytes;
  }
  *reinterpret_cast<typename Half<T>::Pair*>(dst) =
      Half<T>::round_pair(activate<kAct>(v0), activate<kAct>(v1));
}

// The epilogue through shared memory: bias and activation in fp32, rounded,
// written into this consumer's 64 x kBoxCols boxes (stage_pair; 64 columns
// swizzled, 56 dense: Tile::kOutBoxCols), then one thread stores the boxes
// with TMA, which drops what lies past M or N. With
// kStaged boxes for all of the consumer's 64 x (2 kAcc) outputs, they go out
// at once and the consumer goes on to its next tile while the stores drain;
// with fewer (128 x 256 with two boxes) they go out in passes of kStaged
// boxes, each waiting until TMA has read the one before out of shared
// memory. A box is written again only after its last store has read it
// (`fresh`: nothing of this consumer's is pending yet).
template <typename T, int kStaged, int kBoxCols, Activation kAct, int kAcc>
__device__ __forceinline__ void store_tile_tma(const KernelArgs& p, const CUtensorMap* map_out,
                                               const float (&acc)[kAcc], TileBias<T, kAcc>& bias,
                                               uint8_t* c_smem, int64_t m0, int64_t n0, int t,
                                               int consumer, bool fresh) {
  constexpr int kBoxes = 2 * kAcc / kBoxCols;  // kBoxCols-column boxes
  static_assert(kBoxes * kBoxCols == 2 * kAcc && kBoxCols % 8 == 0,
                "whole boxes of whole 8-column groups: no pair straddles two boxes");
  static_assert(kStaged > 0 && kBoxes % kStaged == 0, "whole passes of staged boxes");
  constexpr int kStagedBoxBytes = 64 * kBoxCols * kElemBytes;
  constexpr int kBoxGroups = kBoxCols / 8;  // 8-column groups of a box
  constexpr int kPasses = kBoxes / kStaged;
  constexpr int kGroups = kAcc / 4;  // 8-column groups of the fragment
  constexpr int kPassGroups = kGroups / kPasses;
  const int barrier_id = 1 + consumer;  // 0 is __syncthreads'
  const int row0 = 16 * (t / 32) + (t % 32) / 4;
#pragma unroll
  for (int pass = 0; pass < kPasses; ++pass) {
    if (!fresh || pass > 0) {
      if (t == 0) sm90::bulk_wait_read<0>();
      sm90::named_barrier_sync(barrier_id, 128);
    }
#pragma unroll
    for (int jj = 0; jj < kPassGroups; ++jj) {
      const int j = pass * kPassGroups + jj;
      // The group's box and its column in the box, from j alone (constants
      // in the unrolled loop): taken from the tile's column at run time, the
      // 56-column boxes' division made ptxas spill 8 bytes (128 x 168, bf16).
      const int box = (j / kBoxGroups) % kStaged;
      const int col = 8 * (j % kBoxGroups) + 2 * (t % 4);
      if constexpr (!TileBias<T, kAcc>::kEarly) {  // a box's pairs at its first group
        if (jj % kBoxGroups == 0) bias.template load<kBoxGroups>(p, n0, t, j);
      }
      const float b0 = bias.first(j), b1 = bias.second(j);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        stage_pair<T, kAct, kBoxCols>(c_smem + box * kStagedBoxBytes, row0 + 8 * h, col,
                                      acc[4 * j + 2 * h] + b0, acc[4 * j + 2 * h + 1] + b1);
      }
    }
    sm90::fence_proxy_async_smem();
    sm90::named_barrier_sync(barrier_id, 128);
    if (t == 0) {
#pragma unroll
      for (int box = 0; box < kStaged; ++box) {
        sm90::tma_store_2d(map_out, static_cast<int32_t>(n0 + (pass * kStaged + box) * kBoxCols),
                           static_cast<int32_t>(m0), c_smem + box * kStagedBoxBytes);
      }
      sm90::bulk_commit();
    }
  }
}

template <int kStages>
__device__ __forceinline__ void next_stage(int& stage, uint32_t& phase) {
  if (++stage == kStages) stage = 0, phase ^= 1;
}

// The producer thread's TMA loads of k-tiles [kt_begin, kt_end) of the tile
// at (m0, n0) into the stage ring (A then B a stage, Tl::kStageBytes), each stage
// once its `empty` barrier says the consumers are done with it. kClusterM =
// 2: this CTA loads its half of B and multicasts it to both CTAs (the
// kernel's comment says why).
template <typename T, typename Tl, bool kBKMajor, int kClusterM, int kStages>
__device__ __forceinline__ void load_tile(const CUtensorMap* map_a, const CUtensorMap* map_b,
                                          uint8_t* smem, uint64_t* full, uint64_t* empty,
                                          int32_t m0, int32_t n0, int kt_begin, int kt_end,
                                          uint32_t rank, int& stage, uint32_t& phase) {
  for (int kt = kt_begin; kt < kt_end; ++kt) {
    uint8_t* const a = smem + stage * Tl::kStageBytes;
    uint8_t* const b = a + Tl::kTileABytes;
    sm90::mbar_wait(&empty[stage], phase ^ 1);
    // A (own) + all of B (this CTA's half and the peer's) land here.
    sm90::mbar_arrive_expect_tx(&full[stage], Tl::kStageBytes);
    const int32_t k0 = kt * kBlockKOf<T>;
    sm90::tma_load_2d(a, map_a, k0, m0, &full[stage]);
    if constexpr (kClusterM == 1) {
      if constexpr (kBKMajor) {
        sm90::tma_load_2d(b, map_b, k0, n0, &full[stage]);
      } else {
#pragma unroll
        for (int box = 0; box < Tl::kBlockN / kBoxN; ++box) {
          sm90::tma_load_2d(b + box * kBoxBytes, map_b, n0 + box * kBoxN, k0, &full[stage]);
        }
      }
    } else {
      constexpr uint16_t kAll = (1u << kClusterM) - 1;
      if constexpr (kBKMajor) {
        // The map's box is kBlockN / kClusterM rows of W.
        constexpr int kRows = Tl::kBlockN / kClusterM;
        sm90::tma_load_2d_multicast(b + rank * kRows * 128, map_b, k0,
                                    n0 + static_cast<int32_t>(rank) * kRows, &full[stage], kAll);
      } else {
        constexpr int kBoxes = Tl::kBlockN / kBoxN / kClusterM;
#pragma unroll
        for (int j = 0; j < kBoxes; ++j) {
          const int box = static_cast<int>(rank) * kBoxes + j;
          sm90::tma_load_2d_multicast(b + box * kBoxBytes, map_b, n0 + box * kBoxN, k0,
                                      &full[stage], kAll);
        }
      }
    }
    next_stage<kStages>(stage, phase);
  }
}

// A consumer warpgroup's wgmmas over k-tiles [kt_begin, kt_end) (at least
// one) into acc, its 64 rows of the tile; `release(stage)` frees each stage
// once every wgmma that read it is done. One k-tile of wgmmas stays in
// flight (wait_group 1): the stage of the k-tile before is freed while this
// one runs. Returns with every wgmma complete and every stage released.
template <typename T, typename Tl, bool kBKMajor, int kStages, typename Release>
__device__ __forceinline__ void mma_tile(float (&acc)[Tl::kAcc], uint8_t* smem, uint64_t* full,
                                         int consumer, int kt_begin, int kt_end, int& stage,
                                         uint32_t& phase, const Release& release) {
  int prev_stage = -1;
  for (int kt = kt_begin; kt < kt_end; ++kt) {
    sm90::mbar_wait(&full[stage], phase);
    if (kt == kt_begin) MEMOPT_STAMP(2);  // the first k-tile has landed
    const uint32_t a_base = sm90::smem_addr(smem + stage * Tl::kStageBytes) + consumer * 64 * 128;
    const uint32_t b_base = sm90::smem_addr(smem + stage * Tl::kStageBytes + Tl::kTileABytes);
    sm90::fence_accumulators(acc);
    sm90::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kKSteps; ++kk) {
      // A: 32 bytes further per k-step inside the 128-byte rows.
      const uint64_t desc_a = sm90::smem_desc_sw128(a_base + kk * 32, 16, 1024);
      // B K-major likewise; MN-major: 16 k-rows of 128 bytes further, its
      // 64-column boxes kBoxBytes apart.
      const uint64_t desc_b = kBKMajor
                                  ? sm90::smem_desc_sw128(b_base + kk * 32, 16, 1024)
                                  : sm90::smem_desc_sw128(b_base + kk * 16 * 128, kBoxBytes, 1024);
      wgmma_step<T, kBKMajor, Tl::kAcc>(acc, desc_a, desc_b, (kt > kt_begin || kk > 0) ? 1 : 0);
    }
    sm90::wgmma_commit();
    // The k-tile before this one is done with its stage: free it. Each warp
    // signals after its own wait, so the stage is free once every consumer
    // warp has passed it.
    sm90::wgmma_wait<1>();
    sm90::fence_accumulators(acc);
    if (prev_stage >= 0) release(prev_stage);
    prev_stage = stage;
    next_stage<kStages>(stage, phase);
  }
  sm90::wgmma_wait<0>();
  sm90::fence_accumulators(acc);
  release(prev_stage);
}

// kClusterM = 2: the two CTAs of a cluster own vertically adjacent tiles of
// one tile-column, so they need the same B tile; each loads half of it and
// TMA multicasts that half into both, halving B's L2 -> SM traffic (at 700
// TFLOP/s every SM pulls ~8 TB/s of tiles out of L2 in total). A stage is
// then free only when the consumers of both CTAs are done with it.
// kClusterM = 1 is the plain kernel. The launcher sets the cluster shape
// (kClusterM, 1, 1) at launch time.
// kStaged > 0: the epilogue through shared memory and TMA stores
// (store_tile_tma; needs N % 8 == 0 for the output's tensor map) with
// kStaged boxes of staging per consumer; the stages fill the rest
// (Tile::stages: 128 x 256 with 4 boxes gets 3, with 2 boxes 4).
// Tl: the output tile (Tile); with one consumer warpgroup the 256 threads
// have 255 registers each to start with and no setmaxnreg is needed.
// kStreamK: the last p.sk_units tiles are shared out by k-tiles
// (kernels/stream_k.cuh); the launcher is wgmma_streamk_sm90.cu.
template <typename T, typename Tl, bool kBKMajor, int kClusterM, int kStaged,
          bool kStreamK = false>
__global__ void __launch_bounds__(Tl::kThreads, 1)
    gemm_wgmma_kernel(const __grid_constant__ CUtensorMap map_a,
                      const __grid_constant__ CUtensorMap map_b,
                      const __grid_constant__ CUtensorMap map_out, KernelArgs p) {
  constexpr int kStages = Tl::template stages<kStaged>();
  constexpr int kBlockM = Tl::kBlockM, kBlockN = Tl::kBlockN, kConsumers = Tl::kConsumers;
  constexpr bool kTmaStore = kStaged > 0;
  static_assert(kClusterM == 1 || kClusterM == 2, "clusters of 1 or 2 CTAs along M");
  static_assert(!std::is_same_v<T, float> || (kBKMajor && kClusterM == 1 && !kTmaStore),
                "tf32: K-major B, no cluster, the epilogue from registers");
  static_assert(kClusterM == 1 || kBlockN % (kBoxN * kClusterM) == 0,
                "each CTA multicasts whole 64-column boxes");
  static_assert(!Tl::kKMajor16BitOnly || (kBKMajor && !std::is_same_v<T, float>),
                "a tile of a width not a multiple of 64 takes K-major B in bf16 / fp16 only");
  static_assert(!kStreamK || kClusterM == 1, "stream-K runs one CTA a unit");
  extern __shared__ uint8_t smem_raw[];
  __shared__ uint64_t full[kStages], empty[kStages];
  // Stages start on a 1024-byte boundary: the swizzle pattern of TMA and of
  // the wgmma descriptors is anchored to 1024-byte atoms.
  uint8_t* smem = reinterpret_cast<uint8_t*>(
      (reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t{1023});
  uint8_t* const c_smem = smem + kStages * Tl::kStageBytes;  // kTmaStore only

  const int warpgroup = threadIdx.x / 128;
  const uint32_t rank = kClusterM > 1 ? sm90::cluster_rank() : 0;
  // Timeline stamps (gemm/kernels/stamps.cuh; nothing in the extension's
  // build), read by benchmarks/tune/stamp_wgmma_streamk.cu.
  MEMOPT_STAMP(0);
  MEMOPT_STAMP_SM();
  if (threadIdx.x == 0) {
    sm90::prefetch_tensormap(&map_a);
    sm90::prefetch_tensormap(&map_b);
    if constexpr (kTmaStore) sm90::prefetch_tensormap(&map_out);
    for (int s = 0; s < kStages; ++s) {
      sm90::mbar_init(&full[s], 1);  // the producer's arrive + the TMA bytes
      // One arrival per consumer warp of every CTA whose tiles the stage feeds.
      sm90::mbar_init(&empty[s], kConsumers * 4 * kClusterM);
    }
    sm90::mbar_fence_init();
  }
  if constexpr (kClusterM > 1) {
    sm90::cluster_sync();
  } else {
    __syncthreads();
  }

  // Work comes in units of kClusterM vertically adjacent tiles, one per CTA
  // of a cluster; with kClusterM = 1 a unit is a tile.
  const int64_t tiles_m = (p.M + kBlockM - 1) / kBlockM;
  const int64_t tiles_n = (p.N + kBlockN - 1) / kBlockN;
  const int64_t unit_rows = (tiles_m + kClusterM - 1) / kClusterM;
  const int64_t num_units = unit_rows * tiles_n;
  const int64_t first_unit = blockIdx.x / kClusterM, unit_step = gridDim.x / kClusterM;
  const int k_tiles = static_cast<int>((p.K + kBlockKOf<T> - 1) / kBlockKOf<T>);
  const int64_t sk_units = kStreamK ? p.sk_units : 0;
  const auto for_each_item = [&](const auto& fn) {
    stream_k::for_each_item(first_unit, unit_step, num_units, sk_units, k_tiles, fn);
  };
  const auto tile_of = [&](int64_t unit, int64_t& tm, int64_t& tn) {
    int64_t um;
    grouped_tile(unit, unit_rows, tiles_n, um, tn, p.group_rows);
    tm = um * kClusterM + rank;  // past tiles_m for a lone last row: zeros, stores masked
  };

  if (warpgroup == 0) {
    if constexpr (kConsumers > 1) sm90::setmaxnreg_dec<kProducerRegs>();
    if (threadIdx.x == 0) {
      int stage = 0;
      uint32_t phase = 0;
      for_each_item([&](int64_t unit, int kt_begin, int kt_end) {
        int64_t tm, tn;
        tile_of(unit, tm, tn);
        const int32_t m0 = static_cast<int32_t>(tm * kBlockM);
        const int32_t n0 = static_cast<int32_t>(tn * kBlockN);
        load_tile<T, Tl, kBKMajor, kClusterM, kStages>(&map_a, &map_b, smem, full, empty, m0, n0,
                                                    kt_begin, kt_end, rank, stage, phase);
      });
      MEMOPT_STAMP(1);  // every load issued
    }
  } else {
    if constexpr (kConsumers > 1) sm90::setmaxnreg_inc<kConsumerRegs>();
    const int consumer = warpgroup - 1;
    const int t = threadIdx.x % 128;
    // Frees `stage` in every CTA the stage's B came from.
    const auto release = [&](int stage) {
      if (t % 32 != 0) return;
      if constexpr (kClusterM == 1) {
        sm90::mbar_arrive(&empty[stage]);
      } else {
#pragma unroll
        for (uint32_t cta = 0; cta < kClusterM; ++cta) sm90::mbar_arrive_cluster(&empty[stage], cta);
      }
    };
    float acc[Tl::kAcc];
    int stage = 0;
    uint32_t phase = 0;
    bool first_tile = true;
    int bias_buffer = 0;  // !kEarly: which of the consumer's two bias buffers the next tile takes
#ifdef MEMOPT_WGMMA_STAMPS
    int stamp_items = 0;
#endif
    const int barrier_id = 1 + consumer;  // store_tile_tma's too: the same 128 threads
    for_each_item([&](int64_t unit, int kt_begin, int kt_end) {
      int64_t tm, tn;
      tile_of(unit, tm, tn);
      TileBias<T, Tl::kAcc> bias;  // in flight during the mainloop, in registers or in shared memory
      // Only an item that stores its tile takes the bias: a stream-K item that
      // publishes a partial skips it (its copy could land after a later one's).
      [[maybe_unused]] const bool stores = !kStreamK || kt_begin == 0;
      if constexpr (decltype(bias)::kEarly) {
        bias.load(p, tn * kBlockN, t);
      } else if (stores) {
        auto* buf = reinterpret_cast<typename decltype(bias)::Pair*>(
                        smem + Tl::template bias_offset<kStaged>()) +
                    (2 * consumer + bias_buffer) * Tl::kAcc;
        stage_bias<T, Tl::kAcc>(p, buf, tn * kBlockN, t);
        bias.staged = buf;
        bias_buffer ^= 1;
      }
      mma_tile<T, Tl, kBKMajor, kStages>(acc, smem, full, consumer, kt_begin, kt_end, stage, phase,
                                         release);
#ifdef MEMOPT_WGMMA_STAMPS
      if (stamp_items++ == 0) MEMOPT_STAMP(3);  // the first item's wgmmas done
      MEMOPT_STAMP(4);                          // the last item's
#endif
      if constexpr (kStreamK) {
        if (kt_begin > 0) {  // not the tile's first k-tiles: the owner stores it
          stream_k::publish(p.ws, acc, static_cast<int64_t>(blockIdx.x) * kConsumers + consumer,
                            t, barrier_id);
          MEMOPT_STAMP(5);
          return;
        }
        if (kt_end < k_tiles) {
          const int64_t iters = sk_units * k_tiles;
          const int64_t unit_end_iter = (unit - (num_units - sk_units) + 1) * k_tiles;
          stream_k::add_partials<Tl::kAcc, kConsumers>(p.ws, acc, blockIdx.x, unit_end_iter, iters,
                                                       gridDim.x, consumer, t, barrier_id);
          MEMOPT_STAMP(6);  // the partials added
        }
      }
      if constexpr (!decltype(bias)::kEarly) {
        // Every thread's copies landed, and are visible to the consumer's other
        // threads, whose pairs they are. It also keeps any thread from copying
        // the tile after next into a buffer this tile's epilogue still reads.
        cp_async_wait_all();
        sm90::named_barrier_sync(barrier_id, 128);
      }
      // The activation's switch once a tile, outside the unrolled stores: with
      // it at every element the 128 x 256 epilogue took 4.5 us on fetching
      // the code of the four activations not taken, 1.25 us without
      // (benchmarks/tune/stamp_wgmma_streamk.cu, H200).
      with_activation(p.act, [&](auto act) {
        constexpr Activation kAct = decltype(act)::value;
        if constexpr (kTmaStore) {
          store_tile_tma<T, kStaged, Tl::kOutBoxCols, kAct>(
              p, &map_out, acc, bias, c_smem + consumer * kStaged * Tl::kOutBoxBytes,
              tm * kBlockM + consumer * 64, tn * kBlockN, t, consumer, first_tile);
        } else {
          store_tile<T, kAct>(p, acc, bias, tm * kBlockM + consumer * 64, tn * kBlockN, t);
        }
      });
      first_tile = false;
      MEMOPT_STAMP(7);  // the last tile's stores issued
    });
    // The staging boxes must stay until TMA has read them out; the stores'
    // writes to global memory need no wait (CUTLASS ends its kernels with the
    // same .read wait): the grid is complete only once they are.
    if (kTmaStore && t == 0) sm90::bulk_wait_read<0>();
    MEMOPT_STAMP(8);
  }
  // A peer may still multicast into this CTA or arrive on its barriers until
  // its own last k-tile: no CTA of a cluster leaves before all are done.
  if constexpr (kClusterM > 1) sm90::cluster_sync();
}

}  // namespace wgmma
}  // namespace memopt
