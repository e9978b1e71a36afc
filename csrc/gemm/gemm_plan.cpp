// The GEMM chooser (gemm_plan.h). The rules and the H200 measurements that set
// them: benchmarks/results/tune/wgmma_split_h200.json (the sweep) and
// docs/perf-notes.md.
#include "gemm/gemm_plan.h"

#include <algorithm>
#include <atomic>

namespace memopt {
namespace {

// The wgmma rungs' output tile and k-tile (kernels/wgmma_sm90.cuh).
constexpr int64_t kTileM = 128, kTileN = 256, kTileK = 64;
constexpr int kMaxSplits = 8;  // the portable cluster size
// A split needs k-tiles enough to fill the 4-stage pipeline more than once.
constexpr int64_t kMinKTilesPerSplit = 4;
// Decode shapes: one pass over the weights (splitk, gemv).
constexpr int64_t kSkinnyRows = 64;

std::atomic<int> g_split_override{0};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

int wgmma_split_count(int64_t M, int64_t N, int64_t K, int sm_count) {
  const int64_t tiles = ceil_div(M, kTileM) * ceil_div(N, kTileN);
  const int64_t k_tiles = ceil_div(K, kTileK);
  // The most splits that keep the grid one wave (tiles x splits <= SMs) and
  // each split >= kMinKTilesPerSplit k-tiles.
  int splits = 1;
  for (int s = 2; s <= kMaxSplits; ++s) {
    if (tiles * s <= sm_count && k_tiles >= s * kMinKTilesPerSplit) splits = s;
  }
  return splits;
}

GemmPlan plan_gemm(int64_t M, int64_t N, int64_t K, bool half, Capability cap, int sm_count,
                   bool tma_as_is) {
  GemmPlan plan;
  if (!half) {
    plan.variant = "warptiled";
    plan.reason = "float32: warptiled, the fastest fp32 rung at every size the ladder measured";
    return plan;
  }
  if (cap < 80) {
    plan.variant = "naive";
    plan.reason = "bfloat16/float16 below sm_80: no tensor-core rung runs";
    return plan;
  }
  if (cap != 90) {
    plan.variant = M <= kSkinnyRows ? "gemv" : "mma";
    plan.reason = M <= kSkinnyRows ? "M <= 64 without Hopper: gemv streams the weights once"
                                   : "M > 64 without Hopper: mma.sync, the portable rung";
    return plan;
  }
  if (M <= kSkinnyRows) {
    plan.variant = tma_as_is ? "splitk" : "gemv";
    plan.reason = tma_as_is ? "M <= 64: splitk, the weights as wgmma's A side, split-K in a cluster"
                            : "M <= 64 with rows TMA cannot read as they are: gemv";
    return plan;
  }
  plan.tiles = ceil_div(M, kTileM) * ceil_div(N, kTileN);
  const int override_splits = wgmma_split_override();
  plan.splits = override_splits > 0 ? override_splits : wgmma_split_count(M, N, K, sm_count);
  if (plan.splits > 1) {
    plan.variant = "wgmma_split";
    plan.ctas = plan.tiles * plan.splits;
    plan.reason = "fewer 128x256 tiles than SMs: K split over a cluster, tiles x splits <= SMs";
  } else {
    plan.variant = "wgmma";
    plan.ctas = std::min<int64_t>(plan.tiles, sm_count);
    plan.reason = "tiles enough to fill the SMs (or K too short to split): the persistent wgmma kernel";
  }
  return plan;
}

void set_wgmma_split_override(int splits) { g_split_override.store(std::max(0, splits)); }
int wgmma_split_override() { return g_split_override.load(std::memory_order_relaxed); }

}  // namespace memopt
