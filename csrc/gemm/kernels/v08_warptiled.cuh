// Rung 8 of the GEMM ladder: warptiled, tuned for sm_90.
//
// What changed from vectorized:
// - Warp tiling: the 8 warps of a block own 64x64 sub-tiles of the 128x256
//   block tile (2 x 4 warps), and the 32 lanes of a warp sit on a 4 x 8 grid
//   inside it; a thread's 16x8 micro-tile is four 4-row by two 4-column strips
//   (16 rows and 32 columns apart). Per k-step a warp reads 4 distinct 16-byte
//   words of A per strip (each broadcast to 8 lanes) and 8 consecutive words
//   of B: conflict-free, 128 FMAs a thread against 6 LDS.128.
// - Pipelining: k-step 16 and two shared-memory stages filled by cp.async, so
//   tile t+1 is in flight from HBM while tile t is multiplied, with no
//   register held for it, and one __syncthreads per 2048 FMAs a thread.
// - Fragment double buffering: k-step k+1's shared-memory reads are issued
//   before k-step k's FMAs, across the tile boundary too (the barrier sits
//   before a tile's last k-step). With one block of 8 warps an SM, 2 warps a
//   scheduler, nothing else hides the ~30-cycle LDS latency.
// - Lean copies: interior blocks copy whole k-tiles with no bound checks; the
//   checked copy cost ~130 integer instructions a tile, issued in a burst after
//   the barrier (ncu: "wait" and "dispatch" stalls). +5% at 4096^3.
// - FMA order: column by column (b[j] held while i runs over the 16 rows) gave
//   +5% over row by row with this micro-tile; the order decides how ptxas
//   places operands in register banks (ncu: dispatch stalls). With the 8x8
//   128x128 shape the row order wins instead, so it is part of the Config.
// - Grid order: blocks are numbered in groups of kGroupRows tile-rows, so the
//   blocks resident at once share A and B strips in L2 (at 4096^3 fp32 each
//   operand is 64 MB, over the 60 MB L2).
// - __launch_bounds__(256, 1): up to 255 registers (128 accumulators + 2 x 24
//   fragments), no spills.
//
// Arithmetic per k-step and thread: 128 FMA against 6 LDS.128; global traffic
// 1/128 + 1/256 loads per FMA (0.047 B/FLOP).
//
// Small grids: under one block per SM with 128x256 tiles, the 128x128 shape
// (256 threads, 8x8 a thread, 2 blocks an SM) runs instead: twice the blocks.
//
// Tuning history (benchmarks/tune/, docs/perf-notes.md): 41.9 / 42.4 TFLOP/s at
// 4096^3 / 8192^3 for the first 128x128 8x8 shape; fragment double buffering
// alone +0-3%; lean copies +5%; column FMA order with 128x256 16x8 +5%.
//
// Measured (H200, benchmarks/results/gemm-ladder_h200.json): see docs/results.md's
// ladder table; tuning runs gave 45.8 TFLOP/s at 4096^3 (0.89x cuBLAS 51.3)
// and 46.7 at 8192^3 (0.91x).
#pragma once

#include <type_traits>

#include "common/device_info.h"
#include "gemm/kernels/ladder_common.cuh"
#include "gemm/kernels/tile_order.cuh"

namespace memopt {

namespace warptiled {
// A shape of the rung: block tile, k-step, stages, warp tile, lanes along m
// inside it, blocks per SM, FMA order (column by column or row by row). The warp tile sets the thread count (block tile /
// warp tile x 32) and, with the lanes, each thread's micro-tile: kStripsM x
// kStripsN strips of 4 x 4. benchmarks/tune/ measures the alternatives; Tuned
// is the winner.
template <int kBlockM_, int kBlockN_, int kBlockK_, int kStages_, int kWarpM_, int kWarpN_,
          int kLanesM_, int kMinBlocks_, bool kFmaByColumn_>
struct Config {
  static constexpr int kBlockM = kBlockM_, kBlockN = kBlockN_, kBlockK = kBlockK_;
  static constexpr int kWarpM = kWarpM_, kWarpN = kWarpN_;
  static constexpr int kThreads = (kBlockM / kWarpM) * (kBlockN / kWarpN) * 32;
  static constexpr int kLanesM = kLanesM_, kLanesN = 32 / kLanesM_;
  static constexpr int kStripsM = kWarpM / (4 * kLanesM), kStripsN = kWarpN / (4 * kLanesN);
  static constexpr int kThreadM = 4 * kStripsM, kThreadN = 4 * kStripsN;  // micro-tile
  static constexpr int kPad = 4;  // rows of kBlock + 4 words: 16-byte aligned, transposed stores spread
  static constexpr int kStages = kStages_;
  static constexpr int kMinBlocks = kMinBlocks_;
  static constexpr bool kFmaByColumn = kFmaByColumn_;
  // Shared memory a block: dynamic, since most shapes pass the 48 KB a static
  // array may take.
  static constexpr int kSmemFloats = kStages * kBlockK * (kBlockM + kPad + kBlockN + kPad);
  static_assert(kStripsM * 4 * kLanesM == kWarpM && kStripsN * 4 * kLanesN == kWarpN,
                "a warp's lanes and strips tile its warp tile");
  static_assert(kBlockM * kBlockK % (4 * kThreads) == 0 && kBlockN * kBlockK % (4 * kThreads) == 0,
                "each thread copies whole groups of 4 floats of A and of B per tile");
  static_assert(kStages >= 2, "the copy of tile t + kStages reuses the stage of tile t");
  static_assert(kBlockK % 2 == 0, "k-step 0 of every tile uses fragment buffer 0");
};
// 256 threads, 16 x 8 a thread, k-step 16, 2 stages, FMAs by column: 45.8
// TFLOP/s at 4096^3 and 46.7 at 8192^3 on the H200 (benchmarks/tune, 2026-11-29).
using Tuned = Config<128, 256, 16, 2, 64, 64, 4, 1, true>;
// 256 threads, 8 x 8 a thread, 2 blocks an SM, FMAs by row: for grids under
// one 128 x 256 block per SM (44.0 at 4096^3 itself).
using Small = Config<128, 128, 16, 2, 32, 64, 4, 2, false>;
}  // namespace warptiled

template <typename Cfg, bool kVec, bool kBColMajor>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks) gemm_warptiled_kernel(GemmArgs p) {
  constexpr int kBlockM = Cfg::kBlockM, kBlockN = Cfg::kBlockN, kBlockK = Cfg::kBlockK;
  constexpr int kStages = Cfg::kStages, kPad = Cfg::kPad, kThreads = Cfg::kThreads;
  constexpr int kWarpM = Cfg::kWarpM, kWarpN = Cfg::kWarpN, kLanesN = Cfg::kLanesN;
  constexpr int kStripsM = Cfg::kStripsM, kStripsN = Cfg::kStripsN;
  constexpr int kThreadM = Cfg::kThreadM, kThreadN = Cfg::kThreadN;
  // Strip s of a thread starts kStripStride* x s after its first row / column.
  constexpr int kStripStrideM = 4 * Cfg::kLanesM, kStripStrideN = 4 * kLanesN;
  // Copies per thread and tile: groups of 4 consecutive floats.
  constexpr int kGroupsA = kBlockM * kBlockK / (4 * kThreads);
  constexpr int kGroupsB = kBlockN * kBlockK / (4 * kThreads);
  extern __shared__ __align__(16) float smem[];
  auto As = reinterpret_cast<float (*)[kBlockK][kBlockM + kPad]>(smem);  // (stage, k, m)
  auto Bs = reinterpret_cast<float (*)[kBlockK][kBlockN + kPad]>(
      smem + kStages * kBlockK * (kBlockM + kPad));  // (stage, k, n)
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  const int row_base = (warp / (kBlockN / kWarpN)) * kWarpM + (lane / kLanesN) * 4;
  const int col_base = (warp % (kBlockN / kWarpN)) * kWarpN + (lane % kLanesN) * 4;
  int64_t tile_m, tile_n;
  grouped_tile(blockIdx.x, (p.M + kBlockM - 1) / kBlockM, (p.N + kBlockN - 1) / kBlockN, tile_m,
               tile_n);
  const int64_t m0 = tile_m * kBlockM, n0 = tile_n * kBlockN;

  // This thread's copy plan, fixed for the whole K loop: kGroupsA groups of 4
  // consecutive k of an A row (likewise of a W row when B is column-major),
  // kGroupsB groups of 4 columns of a row-major B row; group g = t + i *
  // kThreads. Sources are formed once and advanced by a pointer increment per
  // tile: 64-bit index math and the tile's stage modulo in the loop were a
  // quarter of its instructions (SASS of the first version: ~140 integer ops
  // per 512 FFMA).
  constexpr int kGroupsPerRow = kBlockK / 4;  // groups of 4 k in one A or W row
  // Group g holds k (g % kGroupsPerRow) * 4 .. + 3 of tile row g / kGroupsPerRow:
  // a warp reads whole 16-byte pieces of consecutive rows.
  const auto group_row = [](int g) { return g / kGroupsPerRow; };
  const auto group_k = [](int g) { return (g % kGroupsPerRow) * 4; };
  const float* a_src[kGroupsA];
  bool a_row_ok[kGroupsA];
#pragma unroll
  for (int i = 0; i < kGroupsA; ++i) {
    const int g = t + i * kThreads, row = group_row(g);
    a_row_ok[i] = m0 + row < p.M;
    a_src[i] = p.a + (a_row_ok[i] ? (m0 + row) * p.a_stride_m : 0) + group_k(g);
  }
  const float* b_src[kGroupsB];
  int b_valid[kGroupsB];  // column-major: row inside N (0/1); row-major: columns inside N (0-4)
#pragma unroll
  for (int i = 0; i < kGroupsB; ++i) {
    const int g = t + i * kThreads;
    if (kBColMajor) {
      const int row = group_row(g);
      b_valid[i] = n0 + row < p.N;
      b_src[i] = p.b + (b_valid[i] ? (n0 + row) * p.b_stride_n : 0) + group_k(g);
    } else {
      const int kk = g / (kBlockN / 4);
      const int64_t n = n0 + (g % (kBlockN / 4)) * 4;
      b_valid[i] = n >= p.N ? 0 : p.N - n >= 4 ? 4 : static_cast<int>(p.N - n);
      b_src[i] = p.b + kk * p.b_stride_k + (b_valid[i] > 0 ? n : 0);
    }
  }
  const int64_t b_step = kBColMajor ? kBlockK : kBlockK * p.b_stride_k;
  const int num_tiles = static_cast<int>((p.K + kBlockK - 1) / kBlockK);

  // A block whose tile lies inside M x N copies its whole k-tiles without a
  // bound check: the checked copy below costs ~130 integer instructions a tile
  // (predicates, zero-fill sizes), issued in a burst after the barrier where
  // no FMA hides them (SASS of 128 x 256, k-step 16).
  const bool interior = m0 + kBlockM <= p.M && n0 + kBlockN <= p.N;
  const int full_tiles = interior ? static_cast<int>(p.K / kBlockK) : 0;

  // Copies tile `tile` into `stage` and advances the sources by one tile.
  const auto issue_tile = [&](int tile, int stage) {
    if (tile < full_tiles) {
#pragma unroll
      for (int i = 0; i < kGroupsA; ++i) {
        const int g = t + i * kThreads, kq = group_k(g);
#pragma unroll
        for (int c = 0; c < 4; ++c) cp_async_4(&As[stage][kq + c][group_row(g)], a_src[i] + c);
        a_src[i] += kBlockK;
      }
#pragma unroll
      for (int i = 0; i < kGroupsB; ++i) {
        const int g = t + i * kThreads;
        if (kBColMajor) {
          const int kq = group_k(g);
#pragma unroll
          for (int c = 0; c < 4; ++c) cp_async_4(&Bs[stage][kq + c][group_row(g)], b_src[i] + c);
        } else {
          const int kk = g / (kBlockN / 4), nq = (g % (kBlockN / 4)) * 4;
          if (kVec) {
            cp_async_16(&Bs[stage][kk][nq], b_src[i]);
          } else {
#pragma unroll
            for (int c = 0; c < 4; ++c) cp_async_4(&Bs[stage][kk][nq + c], b_src[i] + c);
          }
        }
        b_src[i] += b_step;
      }
    } else if (tile < num_tiles) {
      const int64_t k_left64 = p.K - static_cast<int64_t>(tile) * kBlockK;
      const int k_left = k_left64 < kBlockK ? static_cast<int>(k_left64) : kBlockK;
#pragma unroll
      for (int i = 0; i < kGroupsA; ++i) {
        const int g = t + i * kThreads, kq = group_k(g);
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          const bool ok = a_row_ok[i] && kq + c < k_left;
          cp_async_4(&As[stage][kq + c][group_row(g)], ok ? a_src[i] + c : p.a, ok);
        }
        a_src[i] += kBlockK;
      }
#pragma unroll
      for (int i = 0; i < kGroupsB; ++i) {
        const int g = t + i * kThreads;
        if (kBColMajor) {
          const int kq = group_k(g);
#pragma unroll
          for (int c = 0; c < 4; ++c) {
            const bool ok = b_valid[i] && kq + c < k_left;
            cp_async_4(&Bs[stage][kq + c][group_row(g)], ok ? b_src[i] + c : p.b, ok);
          }
        } else {
          const int kk = g / (kBlockN / 4), nq = (g % (kBlockN / 4)) * 4;
          const int valid = kk < k_left ? b_valid[i] : 0;
          if (kVec) {  // one 16-byte copy, zero-filled past N
            cp_async_16(&Bs[stage][kk][nq], valid > 0 ? b_src[i] : p.b, valid);
          } else {
#pragma unroll
            for (int c = 0; c < 4; ++c) {
              cp_async_4(&Bs[stage][kk][nq + c], c < valid ? b_src[i] + c : p.b, c < valid);
            }
          }
        }
        b_src[i] += b_step;
      }
    }
    // Committed even when empty, so wait_group counts whole tiles.
    cp_async_commit();
  };

  // A thread's rows: row_base + {0..3} + s * kStripStrideM for each strip s;
  // columns likewise. Its fragments of k-step k of a stage: 4 floats of A per
  // strip along m, 4 of B per strip along n.
  const auto load_fragments = [&](int stage, int k, float (&a)[kThreadM], float (&b)[kThreadN]) {
#pragma unroll
    for (int s = 0; s < kStripsM; ++s) {
      const float4 v = *reinterpret_cast<const float4*>(&As[stage][k][row_base + s * kStripStrideM]);
      a[4 * s] = v.x, a[4 * s + 1] = v.y, a[4 * s + 2] = v.z, a[4 * s + 3] = v.w;
    }
#pragma unroll
    for (int s = 0; s < kStripsN; ++s) {
      const float4 v = *reinterpret_cast<const float4*>(&Bs[stage][k][col_base + s * kStripStrideN]);
      b[4 * s] = v.x, b[4 * s + 1] = v.y, b[4 * s + 2] = v.z, b[4 * s + 3] = v.w;
    }
  };

  // Fragment double buffering: the shared-memory reads of k-step k + 1 are
  // issued before the FMAs of k-step k, so their ~30-cycle latency hides
  // behind kThreadM x kThreadN independent FMAs instead of stalling the warp
  // (with 2 warps a scheduler, nothing else covers it). Across tiles the same
  // holds: the wait and barrier for tile t + 1 sit before the last k-step of
  // tile t, whose fragments are already in registers.
  float acc[kThreadM][kThreadN] = {};
  float frag_a[2][kThreadM], frag_b[2][kThreadN];
  // Every stage is filled up front: tile t + kStages reuses tile t's stage once
  // all threads hold tile t's last fragments.
#pragma unroll
  for (int s = 0; s < kStages; ++s) issue_tile(s, s);
  cp_async_wait<kStages - 1>();  // tile 0 has landed
  __syncthreads();
  load_fragments(0, 0, frag_a[0], frag_b[0]);
  int stage = 0;  // the stage of `tile`
  for (int tile = 0; tile < num_tiles; ++tile) {
#pragma unroll
    for (int k = 0; k < kBlockK; ++k) {
      if (k + 1 < kBlockK) {
        load_fragments(stage, k + 1, frag_a[(k + 1) % 2], frag_b[(k + 1) % 2]);
      } else {
        // Issued so far: tiles up to tile + kStages - 1; tile + 1 must have
        // landed, kStages - 2 younger ones may still fly.
        cp_async_wait<kStages - 2>();
        // Tile + 1 is visible to all, and all are done reading `stage`.
        __syncthreads();
        issue_tile(tile + kStages, stage);
        const int next = stage == kStages - 1 ? 0 : stage + 1;
        if (tile + 1 < num_tiles) load_fragments(next, 0, frag_a[(k + 1) % 2], frag_b[(k + 1) % 2]);
        stage = next;
      }
      if constexpr (Cfg::kFmaByColumn) {
#pragma unroll
        for (int j = 0; j < kThreadN; ++j) {
#pragma unroll
          for (int i = 0; i < kThreadM; ++i) acc[i][j] += frag_a[k % 2][i] * frag_b[k % 2][j];
        }
      } else {
#pragma unroll
        for (int i = 0; i < kThreadM; ++i) {
#pragma unroll
          for (int j = 0; j < kThreadN; ++j) acc[i][j] += frag_a[k % 2][i] * frag_b[k % 2][j];
        }
      }
    }
  }
  cp_async_wait<0>();  // no copy may outlive the block (the trailing ones are empty)
#pragma unroll
  for (int i = 0; i < kThreadM; ++i) {
    const int64_t m = m0 + row_base + (i / 4) * kStripStrideM + i % 4;
#pragma unroll
    for (int s = 0; s < kStripsN; ++s) {
      store_output4(p, m, n0 + col_base + s * kStripStrideN,
                    make_float4(acc[i][4 * s], acc[i][4 * s + 1], acc[i][4 * s + 2],
                                acc[i][4 * s + 3]));
    }
  }
}

// Launches one of configuration Cfg's three kernels. Past 48 KB a block's
// dynamic shared memory needs an opt-in, per kernel and device, set once
// (opt_in_shared_memory_once).
template <typename Cfg, bool kVec, bool kColMajor>
void launch_warptiled_kernel(const GemmArgs& p, unsigned grid, cudaStream_t stream) {
  constexpr int kSmemBytes = Cfg::kSmemFloats * static_cast<int>(sizeof(float));
  constexpr auto kernel = gemm_warptiled_kernel<Cfg, kVec, kColMajor>;
  if constexpr (kSmemBytes > 48 * 1024) opt_in_shared_memory_once<kernel>(kSmemBytes);
  kernel<<<grid, Cfg::kThreads, kSmemBytes, stream>>>(p);
}

// Launches configuration Cfg: a 1-D grid (the kernel orders its tiles), up to
// 2^31 - 1 blocks, so no chunking over M.
template <typename Cfg>
void launch_warptiled(const GemmArgs& p, cudaStream_t stream) {
  const int64_t blocks =
      static_cast<int64_t>(tiles(p.M, Cfg::kBlockM)) * tiles(p.N, Cfg::kBlockN);
  const unsigned grid = static_cast<unsigned>(blocks);
  if (b_is_col_major(p)) {
    // Column-major B is copied 4 bytes at a time, transposed: no 16-byte path.
    launch_warptiled_kernel<Cfg, false, true>(p, grid, stream);
  } else if (b_allows_vec4(p)) {
    // Only row-major B is ever copied 16 bytes at a time here (A goes 4 bytes
    // at a time, transposed), so only B's alignment decides.
    launch_warptiled_kernel<Cfg, true, false>(p, grid, stream);
  } else {
    launch_warptiled_kernel<Cfg, false, false>(p, grid, stream);
  }
}

}  // namespace memopt
