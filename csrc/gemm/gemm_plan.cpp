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
// A split needs k-tiles enough to fill the 4-stage pipeline more than once.
constexpr int64_t kMinKTilesPerSplit = 4;
// Past 4 splits the sweep measured a loss even where every cluster fit at
// once (M = 128, N = K = 4096, 16 tiles: 24.4 / 31.6 / 29.4 us at 4 / 5 / 6
// splits, H200).
constexpr int kMaxRuleSplits = 4;
// Decode shapes: one pass over the weights (splitk, gemv).
constexpr int64_t kSkinnyRows = 64;

std::atomic<int> g_split_override{0};
std::atomic<ClusterFitsQuery> g_fits_query{nullptr};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t clusters_that_fit(int splits, int sm_count, bool on_device) {
  const ClusterFitsQuery query = g_fits_query.load(std::memory_order_relaxed);
  if (on_device && query != nullptr) {
    const int fits = query(splits);
    if (fits > 0) return fits;
  }
  return sm_count / splits;
}

}  // namespace

void register_cluster_fits_query(ClusterFitsQuery query) { g_fits_query.store(query); }

// The sweep (benchmarks/results/tune/wgmma_split_h200.json) at the Llama
// layers, M = 64-512: the fastest split was the largest (up to 4) whose
// clusters all fit at once; one cluster more than fits runs a second wave
// and costs 1.4-2x (M = 128, N = 6144: 29.4 us at 4 splits, 24 clusters of
// the 30 that fit; 57.9 us at 5 splits, 24 of 22; M = 256, N = 4096: 30.3
// us at 3 splits, 32 of 39; 42.3 us at 4, 32 of 30). The H200 fits 132 /
// 66 / 39 / 30 / 22 / 17 / 15 / 15 clusters of 1-8 CTAs of 197 KB: GPCs,
// not SMs, bound them.
int wgmma_split_count(int64_t M, int64_t N, int64_t K, int sm_count, bool on_device) {
  const int64_t tiles = ceil_div(M, kTileM) * ceil_div(N, kTileN);
  const int64_t k_tiles = ceil_div(K, kTileK);
  int splits = 1;
  for (int s = 2; s <= kMaxRuleSplits; ++s) {
    if (k_tiles >= s * kMinKTilesPerSplit && tiles <= clusters_that_fit(s, sm_count, on_device)) {
      splits = s;
    }
  }
  return splits;
}

GemmPlan plan_gemm(int64_t M, int64_t N, int64_t K, bool half, Capability cap, int sm_count,
                   bool tma_as_is, bool on_device) {
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
  plan.splits =
      override_splits > 0 ? override_splits : wgmma_split_count(M, N, K, sm_count, on_device);
  if (plan.splits > 1) {
    plan.variant = "wgmma_split";
    plan.ctas = plan.tiles * plan.splits;
    plan.reason =
        "fewer 128x256 tiles than SMs: K split over clusters of `splits` CTAs, the most splits "
        "(<= 4, >= 4 k-tiles each) whose clusters all fit on the GPU at once";
  } else {
    plan.variant = "wgmma";
    plan.ctas = std::min<int64_t>(plan.tiles, sm_count);
    plan.reason =
        "tiles enough to fill the SMs (or K too short to split): the persistent wgmma kernel";
  }
  return plan;
}

void set_wgmma_split_override(int splits) { g_split_override.store(std::max(0, splits)); }
int wgmma_split_override() { return g_split_override.load(std::memory_order_relaxed); }

}  // namespace memopt
