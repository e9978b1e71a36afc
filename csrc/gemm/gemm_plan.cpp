// The GEMM chooser (gemm_plan.h). The rules and the H200 measurements that set
// them: benchmarks/results/tune/wgmma_tiles_h200.json (the tile sweep),
// wgmma_split_h200.json (the split sweep) and docs/perf-notes.md.
#include "gemm/gemm_plan.h"

#include <algorithm>
#include <atomic>

#include "gemm/group_rows.h"

namespace memopt {
namespace {

// wgmma_split's output tile (wgmma's largest) and k-tile (kernels/wgmma_sm90.cuh).
constexpr int64_t kTileM = 128, kTileN = 256, kTileK = 64;
// A split needs k-tiles enough to fill the 4-stage pipeline more than once.
constexpr int64_t kMinKTilesPerSplit = 4;
// Past 4 splits the sweep measured a loss even where every cluster fit at
// once (M = 128, N = K = 4096, 16 tiles: 24.4 / 31.6 / 29.4 us at 4 / 5 / 6
// splits, H200).
constexpr int kMaxRuleSplits = 4;
// Decode shapes: one pass over the weights (splitk, gemv). splitk was the
// fastest at M = 16 for every Llama layer (or within 3%); at M = 64 a wgmma
// tile was (64 x 64 at N = 6144: 23.8 us against 34.5) unless its tiles
// leave half the SMs idle and K is long: splitk then, past 64 k-tiles (N =
// 4096, K = 11008 / 14336: 39.0 / 45.3 us against 64 x 64's 39.7 / 49.0; at
// K = 4096 64 x 64 took 19.0 against 20.8), benchmarks/results/tune/
// wgmma_tiles_h200.json (2026-12-04). wgmma_split was never the fastest at
// M = 64 there (24.5 us at N = K = 4096).
// Up to 128 rows, tiles for under a quarter of the SMs take splitk past 32
// k-tiles: at BERT / GPT-2's 128 x 768 x 3072 (24 tiles of 64 x 64, 48
// k-tiles) splitk took 11.9 us against 64 x 64's 14.7; at 128 x 768 x 768
// (12 k-tiles) 12.6 against 7.7. splitk's time hardly moves with K there,
// 64 x 64's grows ~0.19 us a k-tile: they cross near 36 k-tiles
// (wgmma_tiles_encoders_small_h200.json). Llama-3's k/v projection, 128 x
// 1024 x 4096 / 14336: 13.3 / 24.3 us against 17.2 / 46.2
// (wgmma_tiles_gqa_bias_h200.json; both 2026-12-04).
// The half-the-SMs bound holds to M = 256: at 192 / 256 x 1024 x 14336 (48 / 64
// tiles of 64 x 64, 224 k-tiles) splitk took 38.0 / 34.5 us against 64 x 64's
// 46.8 / 46.3 (cuBLAS 30.1 / 30.6); at K = 4096 (64 k-tiles, not past the bound)
// 20.0 / 17.0 against 17.8 / 17.5 (wgmma_tiles_m192_m256_h200.json, 2026-12-04).
// gemv (linear's weight [N, K] only) beats splitk up to 16 rows where its
// 16-row blocks of 8 warps give every SM the 12 warps it wants without
// splitting K (gemv.cu's kMinWarpsPerSm: N >= 24 x SMs, 3168 on the H200) and
// N stays within 16384. Over the Llama layers at M = 1 / 8 / 16: geomean
// 1.09 / 1.08 / 1.05x cuBLAS against splitk's 1.03 / 1.02 / 1.01x (o-proj
// 16.7 against 17.4 us at M = 1; Llama-2's down 31.2 against 35.3), and at a
// hidden-2048 gate_up (16384 x 2048) 25.6-26.3 against 27.6-28.3. Where gemv
// splits K it lost: 3072 x 2048 14.0 against 10.9, 1024 x 4096 12.4 against
// 9.9; and at N = 22016 / 28672 by 1-3% (benchmarks/results/tune/
// decode_rungs_h200.json, decode_rungs_small_h200.json; 2026-12-04).
// Below the columns bound gemv still won where K is short (GPT-2's K = 768
// layers, split K and all: 2304 / 768 / 3072 x 768 at M = 1 7.8 / 7.0 / 8.0
// us against splitk's 8.6 / 7.7 / 8.9, at M = 16 9.4 / 8.5 / 9.5 against 9.6 /
// 8.8 / 9.9; decode_rungs_auto_h200.json), not at K = 2048-4096. Past 16384
// columns short K was not measured: splitk stays.
constexpr int64_t kGemvRows = 16, kGemvColumnsAnSm = 24, kGemvMaxColumns = 16384;
constexpr int64_t kGemvShortK = 1024;
constexpr int64_t kSplitKRows = 32, kSkinnyRows = 64, kSplitKMinKTiles = 64;
constexpr int64_t kHalfTileSplitKRows = 256;
constexpr int64_t kFewTileSplitKRows = 128, kFewTileSplitKMinKTiles = 32;

std::atomic<int> g_split_override{0};
std::atomic<int> g_tile_override{0};  // m * 1000 + n, 0 for the rule
std::atomic<int> g_group_rows_override{0};
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
  const int override_splits = wgmma_split_override();
  if (override_splits > 0) return override_splits;
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

// The tile with the least estimated time: waves x k-tiles x the per-k-tile
// time of a wave of that tile, measured on the H200 by
// benchmarks/tune/sweep_wgmma_tiles.py (benchmarks/results/tune/
// wgmma_tiles_h200.json, the Llama layers at M = 64-2048, and
// wgmma_tiles_encoders_h200.json, the hidden-768 layers of BERT, GPT-2 and
// ViT at M = 1576 and 4096; both swept again 2026-12-04 with the 192-column
// tiles) and fitted by benchmarks/tune/fit_wgmma_tile_rule.py (coordinate
// descent on the rule's geomean loss against the per-shape best tile: 0.39%
// over the 59 shapes; fixed times a wave would take it to 0.21%, not worth
// a second constant a tile).
// - 128 x 256 is compute-bound (0.80 us a k-tile = 690 TFLOP/s over 132 SMs);
//   the narrower tiles stream (64 x 64: 16 KB a k-tile every 0.22 us, 75 GB/s
//   an SM). A lone partial wave of 128 x 256 no longer runs slower a k-tile
//   (the fit: 793 ns against 799), so it has no time of its own.
// - 128 x 192 (0.61 us) and 64 x 192 (0.36 us) fill whole waves where the
//   others leave a last wave mostly idle: M = 256, N = 12288 took 44.4 us in
//   128 x 192 against 52.6 in the old pick, 128 x 64; M = 512, N = 6144 39.9
//   against 49.9.
// - 128 x 168 (linear's K-major weight in 16 bits only) for N = 22016: 132
//   tile columns, so M = 256 / 512 fill 2 / 4 whole waves. Its 541 ns is the
//   mean of 128 x 128's 431 and 128 x 192's 611 (the time tracks the tile's
//   columns between them, 168 being their midpoint), not an H200 fit. On an
//   H100 (2026-12-05, wgmma_tiles_168_llama_h100.json) 512 x 22016 x 4096
//   took 134.6 us, 526 ns a wave's k-tile, against 128 x 192's 146.3 and 128
//   x 256's 149.1 (cuBLAS 131.5); 256 rows 87.4 against 90.5 (cuBLAS 84.8);
//   128 rows 77.7 against 78.3 (82.6). To be refitted with the H200 sweep.
// - The fit has no fixed time a wave any more. Until the epilogue took its
//   activation as a template argument (kernels/wgmma_sm90.cuh) it had 3 us
//   for 128 x 256 and 1 for 128 x 128 and 64 x 256: the epilogue's
//   instruction fetches (4.5 us a 128 x 256 tile, 1.25 now).
// - A tile replaces the one before it in kWgmmaTiles only when 2% faster, so
//   near-ties keep the larger tile and two consumers.
// The cuBLAS kernels that ncu names at the Llama layers make similar picks
// at M = 128-512 (benchmarks/tune/ncu_medium_m.py; docs/perf-notes.md).
double wave_ktile_ns(TileShape t) {
  if (t.m == 128) {
    return t.n == 256 ? 799 : t.n == 192 ? 611 : t.n == 168 ? 541 : t.n == 128 ? 431 : 296;
  }
  return t.n == 256 ? 463 : t.n == 192 ? 356 : t.n == 128 ? 292 : 219;
}

// A wave whose tiles end past M in half of them or more (one or two rows of
// tiles, the last cut by M) runs its k-tiles 1.7x slower: at M = 192, N =
// 4096 the 128 x 64 tiles took 381 ns a k-tile (30.1 us at K = 4096, 91.0 at
// 14336) against 220 at M = 256 (22.6, 57.8), the same 128 tiles; 64 x 128,
// whole at 192, took 23.8 and 59.6 (wgmma_tiles_m192_m256_h200.json). With a
// fifth of the tiles cut (M = 576, 128 x 192) there was no slowdown: 37.7 us
// against 64 x 192's 52.6 (wgmma_tiles_partial_rows_h200.json; both
// 2026-12-04). Where every tile height is cut as much, all pay it and the
// pick does not change. Between a half and a fifth it was not measured.
constexpr double kPartialRowWaveSlowdown = 1.7;

int64_t tile_count(int64_t M, int64_t N, TileShape t) {
  return ceil_div(M, t.m) * ceil_div(N, t.n);
}

bool wgmma_tile_runs(TileShape t, bool k_major_16bit) {
  return k_major_16bit || !(t.m == 128 && t.n == 168);
}

TileShape wgmma_tile(int64_t M, int64_t N, int64_t K, int sm_count, bool k_major_16bit) {
  const TileShape forced = wgmma_tile_override();
  if (forced.m > 0) return wgmma_tile_runs(forced, k_major_16bit) ? forced : TileShape{128, 192};
  const double k_tiles = static_cast<double>(ceil_div(K, 64));
  const auto estimate = [&](TileShape t) {
    const int64_t tiles = tile_count(M, N, t);
    const bool cut_half = M % t.m != 0 && ceil_div(M, t.m) <= 2;
    const double partial = cut_half ? kPartialRowWaveSlowdown : 1.0;
    return static_cast<double>(ceil_div(tiles, sm_count)) * k_tiles * wave_ktile_ns(t) * partial;
  };
  TileShape best = kWgmmaTiles[0];
  double best_ns = estimate(best);
  for (const TileShape t : kWgmmaTiles) {
    if (!wgmma_tile_runs(t, k_major_16bit)) continue;
    const double ns = estimate(t);
    if (ns < 0.98 * best_ns) best = t, best_ns = ns;
  }
  return best;
}

// Whole waves stay a tile a CTA; the partial last wave and the full one
// before it are shared out, so each CTA's share of them is 1-2 tiles and a
// tile is cut into at most 3 runs: the fix-up reads 1-2 partials a tile
// (CUTLASS's stream-K keeps the same "data-parallel waves + 1-2 stream-K
// waves" split, for the same reason). Fewer tiles than SMs: all shared, at
// most one CTA a k-tile.
StreamKSplit stream_k_split(int64_t M, int64_t N, int64_t K, TileShape tile, int sm_count) {
  const int64_t tiles = tile_count(M, N, tile), k_tiles = ceil_div(K, 64);
  StreamKSplit split;
  if (tiles <= 0 || k_tiles <= 0 || sm_count <= 0) return split;
  if (tiles < sm_count) {
    split.ctas = std::min<int64_t>(sm_count, tiles * k_tiles);
    split.sk_units = tiles;
  } else {
    split.ctas = sm_count;
    split.sk_units = tiles % sm_count == 0 ? 0 : sm_count + tiles % sm_count;
  }
  return split;
}

StreamKWorkspace stream_k_workspace(StreamKSplit split, TileShape tile) {
  StreamKWorkspace ws;
  if (split.sk_units == 0) return ws;
  const int64_t slots = split.ctas * (tile.m / 64);
  ws.flag_bytes = ceil_div(slots * 4, 256) * 256;  // the partials start 256-byte aligned
  ws.bytes = ws.flag_bytes + slots * 64 * tile.n * 4;
  return ws;
}

TileShape stream_k_tile() {
  const TileShape forced = wgmma_tile_override();
  return forced.m == 128 && forced.n == 128 ? TileShape{128, 128} : TileShape{128, 256};
}

bool set_wgmma_tile_override(TileShape tile) {
  bool known = tile.m == 0 && tile.n == 0;
  for (const TileShape t : kWgmmaTiles) known = known || (t.m == tile.m && t.n == tile.n);
  if (!known) return false;
  g_tile_override.store(tile.m * 1000 + tile.n);
  return true;
}

TileShape wgmma_tile_override() {
  const int code = g_tile_override.load(std::memory_order_relaxed);
  return {code / 1000, code % 1000};
}

GemmPlan plan_gemm(int64_t M, int64_t N, int64_t K, bool half, Capability cap, int sm_count,
                   bool tma_as_is, bool b_k_major, bool tf32) {
  GemmPlan plan;
  if (!half && tf32 && cap == 90) {
    // A tf32 k-tile (32 elements) holds the bytes of a 16-bit one and takes the
    // same tensor-core time (half the k at half the rate), so the tile rule is
    // the 16-bit one; there is no tf32 splitk or wgmma_split.
    // k-tiles of 32, not 64; B K-major (gemm's b transposed first), but tf32.
    const TileShape tile = wgmma_tile(M, N, 2 * K, sm_count, false);
    plan.variant = "wgmma_tf32";
    plan.tile_m = tile.m, plan.tile_n = tile.n;
    plan.tiles = tile_count(M, N, tile);
    plan.ctas = std::min<int64_t>(plan.tiles, sm_count);
    plan.reason =
        "float32 with tf32 allowed on Hopper: the wgmma kernel reading float32 as tf32, the tile "
        "of the 16-bit rule";
    return plan;
  }
  if (!half) {
    plan.variant = "warptiled";
    plan.reason = "float32 (tf32 not allowed, or not Hopper): warptiled, the fastest fp32 rung at "
                  "every size the ladder measured";
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
  const TileShape tile = wgmma_tile(M, N, K, sm_count, b_k_major);
  const int64_t tiles = tile_count(M, N, tile);
  const bool few_tiles = 2 * tiles < sm_count;
  if (M <= kSkinnyRows && !tma_as_is) {
    plan.variant = "gemv";
    plan.reason = "M <= 64 with rows TMA cannot read as they are: gemv";
    return plan;
  }
  const int64_t gemv_fill_columns = kGemvColumnsAnSm * sm_count;
  const bool gemv_fills = N >= gemv_fill_columns && N <= kGemvMaxColumns;
  const bool gemv_short_k = N < gemv_fill_columns && K <= kGemvShortK;
  if (M <= kGemvRows && b_k_major && (gemv_fills || gemv_short_k)) {
    plan.variant = "gemv";
    plan.reason =
        "decode rows (M <= 16) of linear's weight layout, N from 24 columns an SM to 16384, or "
        "fewer with K <= 1024: gemv, the weights streamed once (1.05-1.09x cuBLAS over the Llama "
        "layers, splitk 1.01-1.03x)";
    return plan;
  }
  const int64_t k_tiles = ceil_div(K, kTileK);
  const bool very_few_tiles = 4 * tiles < sm_count;
  if (M <= kSplitKRows || (M <= kHalfTileSplitKRows && few_tiles && k_tiles > kSplitKMinKTiles) ||
      (M <= kFewTileSplitKRows && very_few_tiles && k_tiles > kFewTileSplitKMinKTiles)) {
    plan.variant = "splitk";
    plan.reason =
        "decode rows (M <= 32; <= 256 with wgmma tiles for fewer than half the SMs and more "
        "than 64 k-tiles; <= 128 with tiles for under a quarter of them and more than 32 k-tiles): "
        "splitk, the weights as wgmma's A side, split-K in a cluster";
    return plan;
  }
  // No wgmma_split here: it was the fastest config at none of the 89 swept
  // shapes (the Llama layers at M = 16-2048, the hidden-768 ones at 128-4096);
  // where auto took it, the tile rule's tile was 1.9x faster (128 x 768 x 768:
  // 15.8 us against 64 x 64's 8.2). variant="wgmma_split" still runs it.
  plan.variant = "wgmma";
  plan.tile_m = tile.m, plan.tile_n = tile.n;
  plan.tiles = tiles;
  plan.ctas = std::min<int64_t>(tiles, sm_count);
  plan.reason =
      "the persistent wgmma kernel with the tile of the least estimated time: waves x k-tiles x "
      "the per-k-tile time of a wave of that tile, measured on the H200";
  return plan;
}

int wgmma_group_rows() {
  const int forced = wgmma_group_rows_override();
  return forced > 0 ? forced : kGroupRows;
}

void set_wgmma_group_rows_override(int rows) { g_group_rows_override.store(std::max(0, rows)); }
int wgmma_group_rows_override() { return g_group_rows_override.load(std::memory_order_relaxed); }

void set_wgmma_split_override(int splits) { g_split_override.store(std::max(0, splits)); }
int wgmma_split_override() { return g_split_override.load(std::memory_order_relaxed); }

}  // namespace memopt
