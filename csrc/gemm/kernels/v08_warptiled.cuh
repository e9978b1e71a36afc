// Rung 8 of the GEMM ladder: warptiled, tuned for sm_90.
//
// What changed from vectorized:
// - Warp tiling: the 8 warps of a block own 32x64 sub-tiles of the 128x128
//   block tile (4 x 2 warps), and the 32 lanes of a warp sit on a 4 x 8 grid
//   inside it; a thread's 8x8 micro-tile is two 4-row by two 4-column strips
//   (16 rows and 32 columns apart). Per k-step a warp reads 4 distinct 16-byte
//   words of A (each broadcast to 8 lanes) and 8 consecutive words of B:
//   conflict-free, and 96 words of shared memory per warp and k instead of the
//   128 + 128 a 16 x 16 thread grid over the whole block touches.
// - Pipelining: k-step 16 and two shared-memory stages filled by cp.async, so
//   tile t+1 is in flight from HBM while tile t is multiplied, with no
//   register held for it (register staging, tried first, spilled at the
//   128-register cap) and one __syncthreads per 1024 FMAs a thread.
// - Lean copy loop: source pointers formed once and bumped per tile; a first
//   version's 64-bit index math and stage modulo were ~140 integer ops per 512
//   FFMA in its SASS.
// - Grid order: blocks are numbered in groups of kGroupRows tile-rows, so the
//   blocks resident at once share A and B strips in L2 (at 4096^3 fp32 each
//   operand is 64 MB, over the 60 MB L2).
// - __launch_bounds__(256, 2): at most 128 registers a thread, so 2 blocks
//   (16 warps) fit per SM and one block's barrier overlaps the other's math.
//
// Arithmetic per k-step and thread: 64 FMA against 4 LDS.128; global traffic
// per FMA as rung 6 (2/128 loads, 0.0625 B/FLOP).
//
// Tuning (benchmarks/tune/, H200, 4096^3 / 8192^3, cuBLAS 51.2 in the same
// runs): k-step 8 with 3 stages 37.9 / 38.0 TFLOP/s; k-step 16 with 2 stages
// 41.9 / 42.4; 3 stages or k-step 32 no better; 128 threads with 16 x 8 a
// thread 42.0 / 43.9 but 7% slower with linear's column-major weight.
//
// Measured (H200, benchmarks/results/gemm_ladder_h200.json): 41.9 TFLOP/s at
// 4096^3 (0.82x cuBLAS 51.2), 42.7 at 8192^3 (0.83x), 42.3 at 4095^3 (0.87x);
// short of the 0.90x target.
#pragma once

#include "gemm/kernels/ladder_common.cuh"

namespace memopt {

namespace warptiled {
// A shape of the rung: k-step, stages, warp tile, lanes along m inside it,
// blocks per SM. The 128 x 128 block tile is fixed; the warp tile sets the
// thread count (128 x 128 / warp tile x 32) and, with the lanes, each
// thread's micro-tile: kStripsM x kStripsN strips of 4 x 4.
// benchmarks/tune/ measures the alternatives; Tuned is the winner.
template <int kBlockK_, int kStages_, int kWarpM_, int kWarpN_, int kLanesM_, int kMinBlocks_>
struct Config {
  static constexpr int kBlockM = 128, kBlockN = 128, kBlockK = kBlockK_;
  static constexpr int kWarpM = kWarpM_, kWarpN = kWarpN_;
  static constexpr int kThreads = (kBlockM / kWarpM) * (kBlockN / kWarpN) * 32;
  static constexpr int kLanesM = kLanesM_, kLanesN = 32 / kLanesM_;
  static constexpr int kStripsM = kWarpM / (4 * kLanesM), kStripsN = kWarpN / (4 * kLanesN);
  static constexpr int kThreadM = 4 * kStripsM, kThreadN = 4 * kStripsN;  // micro-tile
  static constexpr int kPad = 4;  // rows of 132 words: 16-byte aligned, transposed stores conflict-free
  static constexpr int kStages = kStages_;
  static constexpr int kMinBlocks = kMinBlocks_;
  // Shared memory a block: dynamic, since 3 stages of k-step 16 pass the 48 KB
  // a static array may take.
  static constexpr int kSmemFloats = kStages * kBlockK * (kBlockM + kPad + kBlockN + kPad);
  static_assert(kStripsM * 4 * kLanesM == kWarpM && kStripsN * 4 * kLanesN == kWarpN,
                "a warp's lanes and strips tile its warp tile");
  static_assert(kBlockM * kBlockK % (4 * kThreads) == 0 && kBlockN * kBlockK % (4 * kThreads) == 0,
                "each thread copies whole groups of 4 floats of A and of B per tile");
};
// 256 threads, 8 x 8 a thread, k-step 16, 2 stages: 41.9 TFLOP/s at 4096^3 on the
// H200 against 37.4 for k-step 8 (benchmarks/tune, 2026-11-29).
using Tuned = Config<16, 2, 32, 64, 4, 2>;
constexpr int kGroupRows = 8;  // tile-rows per L2 group of the grid
}  // namespace warptiled

// The (tile_m, tile_n) of this block: consecutive block ids walk down a group
// of kGroupRows tile-rows before moving one tile to the right.
__device__ __forceinline__ void grouped_tile(int64_t tiles_m, int64_t tiles_n, int64_t& tile_m,
                                             int64_t& tile_n) {
  const int64_t id = blockIdx.x;
  const int64_t per_group = warptiled::kGroupRows * tiles_n;
  const int64_t first_m = (id / per_group) * warptiled::kGroupRows;
  const int64_t rows = min(tiles_m - first_m, static_cast<int64_t>(warptiled::kGroupRows));
  tile_m = first_m + (id % per_group) % rows;
  tile_n = (id % per_group) / rows;
}

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
  grouped_tile((p.M + kBlockM - 1) / kBlockM, (p.N + kBlockN - 1) / kBlockN, tile_m, tile_n);
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

  // Copies tile `tile` into `stage` and advances the sources by one tile.
  const auto issue_tile = [&](int tile, int stage) {
    if (tile < num_tiles) {
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
  // columns likewise.
  float acc[kThreadM][kThreadN] = {};
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) issue_tile(s, s);
  int stage = 0;  // the stage of `tile`; the copy issued in its iteration goes one stage back
  for (int tile = 0; tile < num_tiles; ++tile) {
    cp_async_wait<kStages - 2>();  // this thread's copies of `tile` have landed
    // `tile` is visible to all threads, and all are done with tile - 1, whose
    // stage the copy issued next reuses.
    __syncthreads();
    issue_tile(tile + kStages - 1, stage == 0 ? kStages - 1 : stage - 1);
#pragma unroll
    for (int k = 0; k < kBlockK; ++k) {
      float a[kThreadM], b[kThreadN];
#pragma unroll
      for (int s = 0; s < kStripsM; ++s) {
        const float4 v =
            *reinterpret_cast<const float4*>(&As[stage][k][row_base + s * kStripStrideM]);
        a[4 * s] = v.x, a[4 * s + 1] = v.y, a[4 * s + 2] = v.z, a[4 * s + 3] = v.w;
      }
#pragma unroll
      for (int s = 0; s < kStripsN; ++s) {
        const float4 v =
            *reinterpret_cast<const float4*>(&Bs[stage][k][col_base + s * kStripStrideN]);
        b[4 * s] = v.x, b[4 * s + 1] = v.y, b[4 * s + 2] = v.z, b[4 * s + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < kThreadM; ++i) {
#pragma unroll
        for (int j = 0; j < kThreadN; ++j) acc[i][j] += a[i] * b[j];
      }
    }
    stage = stage == kStages - 1 ? 0 : stage + 1;
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

// Launches configuration Cfg: a 1-D grid (the kernel orders its tiles), up to
// 2^31 - 1 blocks, so no chunking over M.
template <typename Cfg>
void launch_warptiled(const GemmArgs& p, cudaStream_t stream) {
  const int64_t blocks =
      static_cast<int64_t>(tiles(p.M, Cfg::kBlockM)) * tiles(p.N, Cfg::kBlockN);
  const bool col_major = b_is_col_major(p);
  // Only row-major B is ever copied 16 bytes at a time here (A goes 4 bytes at
  // a time, transposed), so only B's alignment decides.
  const bool vec = !col_major && b_allows_vec4(p);
  const unsigned grid = static_cast<unsigned>(blocks);
  constexpr int kSmemBytes = Cfg::kSmemFloats * static_cast<int>(sizeof(float));
  const auto launch = [&](auto kernel) {
    // Past 48 KB a block's dynamic shared memory needs an opt-in, per kernel.
    if (kSmemBytes > 48 * 1024) {
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
    }
    kernel<<<grid, Cfg::kThreads, kSmemBytes, stream>>>(p);
  };
  if (col_major) {
    // Column-major B is copied 4 bytes at a time, transposed: no 16-byte path.
    launch(gemm_warptiled_kernel<Cfg, false, true>);
  } else if (vec) {
    launch(gemm_warptiled_kernel<Cfg, true, false>);
  } else {
    launch(gemm_warptiled_kernel<Cfg, false, false>);
  }
}

}  // namespace memopt
