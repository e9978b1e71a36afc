// What `auto` runs for a GEMM of a shape, and why: one function that
// gemm_cuda.cu's auto choice and torch_memopt.gemm_plan both ask, so the
// answer Python reads is the launch the op makes. Pure arithmetic on the
// shape and the device's SM count: ATen- and CUDA-free, it builds in the
// CPU-only extension too.
#pragma once

#include <cstdint>
#include <string>

#include "common/variants.h"

namespace memopt {

struct GemmPlan {
  std::string variant;  // the rung auto takes
  int splits = 1;       // K splits over a cluster: 1 (auto takes no wgmma_split)
  int tile_m = 0, tile_n = 0;  // the output tile of wgmma / wgmma_split (0: not a tiled rung)
  int64_t tiles = 0;    // output tiles of the rung's tile shape (0: not a tiled rung)
  int64_t ctas = 0;     // blocks the launch asks for (0: not worked out here)
  std::string reason;   // the rule and the measurement behind it
};

// How many clusters of `splits` wgmma_split CTAs the current device runs at
// once (cudaOccupancyMaxActiveClusters; 0 when it cannot say). The CUDA
// launcher (wgmma_split_sm90.cu) registers it at load time; without it (a
// CPU-only build, or a GPU described rather than present) the plan assumes
// sm_count / splits.
using ClusterFitsQuery = int (*)(int splits);
void register_cluster_fits_query(ClusterFitsQuery query);

// M x K @ K x N. half: bfloat16 / float16 (else float32); tma_as_is: TMA can
// read both operands without a re-laid copy (rows 16-byte aligned);
// b_k_major: B is read as rows along K (linear's weight [N, K]), else as
// row-major [K, N]; tf32: float32 may be read as tf32
// (torch.backends.cuda.matmul.allow_tf32).
GemmPlan plan_gemm(int64_t M, int64_t N, int64_t K, bool half, Capability cap, int sm_count,
                   bool tma_as_is, bool b_k_major, bool tf32 = false);

// The wgmma_split rung's K splits for a shape (1: no split pays), or the
// override's.
int wgmma_split_count(int64_t M, int64_t N, int64_t K, int sm_count, bool on_device);

// The wgmma rung's output tile for a shape, rows x columns: one of
// kWgmmaTiles that runs for the call (wgmma_tile_runs), or the override's.
struct TileShape {
  int m, n;
};
// Every tile the rung is built for. Largest first; of equal areas, two
// consumer warpgroups (128 rows) first.
constexpr TileShape kWgmmaTiles[] = {{128, 256}, {128, 192}, {128, 168}, {128, 128}, {64, 256},
                                     {64, 192},  {128, 64},  {64, 128},  {64, 64}};
// Whether tile t runs for a call whose B is read K-major (linear's weight
// [N, K]) in bfloat16 / float16 (k_major_16bit), or for another (gemm's
// row-major b, or tf32): 128 x 168 only the first (gemm's b loads in
// 64-column boxes; no tf32 m64n168), every other tile both.
bool wgmma_tile_runs(TileShape t, bool k_major_16bit);
// The tile for M x N x K on sm_count SMs, among those that run for the call.
// An override that does not run for it gives 128 x 192, the nearest tile that
// does.
TileShape wgmma_tile(int64_t M, int64_t N, int64_t K, int sm_count, bool k_major_16bit);

// Stream-K's split of an M x N x K GEMM's output tiles (`tile`, k-tiles of
// 64) over the persistent grid (kernels/stream_k.cuh): `ctas` CTAs, the last
// `sk_units` tiles shared out by k-tiles, the ones before them (whole waves)
// a tile a CTA. sk_units = 0: the tiles fill whole waves, nothing to share.
// The launcher and the workspace's allocation (gemm_cuda.cu) both ask it.
struct StreamKSplit {
  int64_t ctas = 0, sk_units = 0;
};
StreamKSplit stream_k_split(int64_t M, int64_t N, int64_t K, TileShape tile, int sm_count);

// Its device workspace: a 4-byte flag a (CTA, consumer warpgroup) in the
// first flag_bytes (zeroed before each launch), then an fp32 partial tile
// of 64 x tile.n a (CTA, consumer). bytes = 0: none needed.
struct StreamKWorkspace {
  int64_t flag_bytes = 0, bytes = 0;
};
StreamKWorkspace stream_k_workspace(StreamKSplit split, TileShape tile);

// The wgmma_streamk rung's tile: 128 x 128 where the override asks for it,
// else 128 x 256 (the two it is built for).
TileShape stream_k_tile();

// A process-wide override of the wgmma rung's tile for the tuning sweep and
// the tests: one of kWgmmaTiles, or {0, 0} to restore the rule. False (and
// nothing changed) for any other shape.
bool set_wgmma_tile_override(TileShape tile);
TileShape wgmma_tile_override();

// The tile-rows of a group in the wgmma rung's tile order
// (kernels/tile_order.cuh): the blocks resident at once cover about
// group_rows x (SMs / group_rows) tiles, which read that many strips of A and
// B. kGroupRows (8) for every tile and shape (4-32 rows swept on the H100
// moved no case past the clocks' drift: docs/perf-notes.md, 2026-12-06), or
// the override's.
int wgmma_group_rows();
// A process-wide override of it for the tuning sweep
// (benchmarks/tune/sweep_group_rows.py): 1-64 tile-rows, 0 restores the rule.
void set_wgmma_group_rows_override(int rows);
int wgmma_group_rows_override();

// A process-wide override of wgmma_split's splits for the tuning sweep
// (benchmarks/tune/sweep_wgmma_split.py) and the tests; 0 restores the rule.
void set_wgmma_split_override(int splits);
int wgmma_split_override();

}  // namespace memopt
