// Launcher of the splitk rung (kernels/splitk_sm90.cuh): decode-shape
// bfloat16 / float16 GEMM on Hopper, weights as wgmma's A side, split-K over
// a thread-block cluster. ATen-free; gemm_cuda.cu calls it on compute
// capability 9.0 with operands that pass wgmma_operands_ok.
//
// What it picks:
// - kTok, the token width of a tile: M rounded up to 8, 16, 32 or 64; more
//   than 64 tokens run as several token tiles (grid z), each re-reading the
//   weights (the rung is for M <= 64; correct for any M).
// - splits, the CTAs that share one 64-row output tile along K: doubled
//   until the grid holds kMinCtasPerSm x SMs CTAs, at most 8 (the portable
//   cluster size) and at least kMinKTilesPerSplit k-tiles (of 64) each.
//   N = K = 4096: 64 row tiles x 4 splits = 256 CTAs of 16 k-tiles; N =
//   11008: 172 x 2 = 344 CTAs of 32.
// Measured (H200, bf16/fp16 linear, benchmarks/results/tensor-core_h200.json): M =
// 64 at 0.87-0.88x cuBLAS (gemv: 0.41-0.52x), M = 1..16 at 0.98-1.06x; the
// sweep of splits 1-8 and of stages / k-boxes a stage
// (benchmarks/results/tune/splitk_h200.json) found nothing better than this
// rule. docs/perf-notes.md has the figures and what caps them.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "common/cluster_launch.cuh"
#include "common/device_info.h"
#include "common/kernel_registry.h"
#include "gemm/half_gemm.h"
#include "gemm/kernels/splitk_sm90.cuh"
#include "gemm/tma_map.h"

namespace memopt {
namespace {

// 1.5 CTAs an SM: with 4 stages of >= 8 KB of weights each, ~48 KB in
// flight an SM, above the ~32 KB that Little's law asks for at copy speed
// (4.2 TB/s x ~1 us / 132 SMs).
constexpr int64_t kMinCtasPerSm2 = 3;  // in halves
constexpr int kMinKTilesPerSplit = 4;
constexpr int kDefaultStages = 4;
constexpr int kDefaultBoxes = 1;  // 64 k a stage

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int default_splits(int64_t row_tiles, int64_t token_tiles, int k_tiles) {
  int splits = 1;
  while (splits < splitk::kMaxSplits &&
         row_tiles * token_tiles * splits * 2 < kMinCtasPerSm2 * sm_count() &&
         k_tiles >= 2 * splits * kMinKTilesPerSplit) {
    splits *= 2;
  }
  return splits;
}

// splits <= 0: default_splits.
template <typename T, int kTok, bool kWKMajor, int kStages, int kBoxes>
void launch_typed(const HalfGemmArgs& p, int splits, cudaStream_t stream) {
  using namespace splitk;
  const CUtensorMap map_w = kWKMajor
                                ? make_tma_map(p.b, p.dtype, p.N, p.K, p.b_stride, kRows, kBlockK)
                                : make_tma_map(p.b, p.dtype, p.K, p.N, p.b_stride, kBlockK, kRows);
  const CUtensorMap map_x = make_tma_map(p.a, p.dtype, p.M, p.K, p.a_stride_m, kTok, kBlockK);
  const int64_t row_tiles = ceil_div(p.N, kRows);
  const int64_t token_tiles = ceil_div(p.M, kTok);
  const int k_tiles = static_cast<int>(ceil_div(p.K, kBlockK * kBoxes));
  if (splits <= 0) splits = default_splits(row_tiles, token_tiles, k_tiles);
  splits = std::min(splits, std::min(kMaxSplits, k_tiles));
  Params params{p.bias, p.out, p.M, p.N, 0, k_tiles, p.act};
  params.k_tiles_per_split = static_cast<int>(ceil_div(k_tiles, splits));

  constexpr auto kernel = gemm_splitk_kernel<T, kTok, kWKMajor, kStages, kBoxes>;
  constexpr int kSmem = smem_bytes<kTok, kStages, kBoxes>();
  opt_in_shared_memory_once<kernel>(kSmem);
  // The splits of one tile form a cluster: they reduce through distributed shared memory.
  ClusterLaunch cluster(dim3(static_cast<unsigned>(row_tiles), static_cast<unsigned>(splits),
                             static_cast<unsigned>(token_tiles)),
                        dim3(kThreads), dim3(1, static_cast<unsigned>(splits)), stream, kSmem);
  cluster.launch(kernel, map_w, map_x, params);  // checked by gemm_cuda.cu's launch check
}

template <typename T, bool kWKMajor, int kStages, int kBoxes>
void launch_layout(const HalfGemmArgs& p, int splits, cudaStream_t stream) {
  if (p.M <= 8) {
    launch_typed<T, 8, kWKMajor, kStages, kBoxes>(p, splits, stream);
  } else if (p.M <= 16) {
    launch_typed<T, 16, kWKMajor, kStages, kBoxes>(p, splits, stream);
  } else if (p.M <= 32) {
    launch_typed<T, 32, kWKMajor, kStages, kBoxes>(p, splits, stream);
  } else {
    launch_typed<T, 64, kWKMajor, kStages, kBoxes>(p, splits, stream);
  }
}

template <int kStages, int kBoxes>
void launch_stages(const HalfGemmArgs& p, int splits, cudaStream_t stream) {
  if (p.dtype == HalfType::bf16) {
    p.b_k_major ? launch_layout<__nv_bfloat16, true, kStages, kBoxes>(p, splits, stream)
                : launch_layout<__nv_bfloat16, false, kStages, kBoxes>(p, splits, stream);
  } else {
    p.b_k_major ? launch_layout<__half, true, kStages, kBoxes>(p, splits, stream)
                : launch_layout<__half, false, kStages, kBoxes>(p, splits, stream);
  }
}

}  // namespace

bool splitk_shape_ok(const HalfGemmArgs& p) {
  return (p.M + splitk::kMaxTokTile - 1) / splitk::kMaxTokTile <= 65535;
}

void launch_gemm_splitk(const HalfGemmArgs& p, cudaStream_t stream) {
  launch_stages<kDefaultStages, kDefaultBoxes>(p, 0, stream);
}

#ifdef MEMOPT_WGMMA_TUNING_VARIANTS
// The tuning harness's entry (benchmarks/tune/wgmma_configs.cu): explicit
// splits (0: the default rule); `config` picks (stages, k-boxes a stage):
// 0 (4, 1), 1 (8, 1), 2 (4, 2), 3 (2, 4), 4 (3, 2), 5 (4, 4).
void launch_gemm_splitk_tuned(const HalfGemmArgs& p, int splits, int config, cudaStream_t stream) {
  switch (config) {
    case 1: launch_stages<8, 1>(p, splits, stream); break;
    case 2: launch_stages<4, 2>(p, splits, stream); break;
    case 3: launch_stages<2, 4>(p, splits, stream); break;
    case 4: launch_stages<3, 2>(p, splits, stream); break;
    case 5: launch_stages<4, 4>(p, splits, stream); break;
    default: launch_stages<4, 1>(p, splits, stream); break;
  }
}
#endif  // MEMOPT_WGMMA_TUNING_VARIANTS

// kernel_info (common/kernel_registry.h): launch_gemm_splitk's four token
// widths in bfloat16 (the tensor-core benchmark's dtype, decode rows M = 1,
// 8, 16, 64), for gemm's row-major b and for linear's weight [N, K].
namespace {

template <bool kWKMajor>
std::vector<KernelEntry> splitk_kernels(const char* op) {
  using T = __nv_bfloat16;
  constexpr int kS = kDefaultStages, kB = kDefaultBoxes;
  return {{op, "splitk", "bfloat16, 8-token tiles (M <= 8)",
           kernel_address(splitk::gemm_splitk_kernel<T, 8, kWKMajor, kS, kB>)},
          {op, "splitk", "bfloat16, 16-token tiles (M <= 16)",
           kernel_address(splitk::gemm_splitk_kernel<T, 16, kWKMajor, kS, kB>)},
          {op, "splitk", "bfloat16, 32-token tiles (M <= 32)",
           kernel_address(splitk::gemm_splitk_kernel<T, 32, kWKMajor, kS, kB>)},
          {op, "splitk", "bfloat16, 64-token tiles (larger M)",
           kernel_address(splitk::gemm_splitk_kernel<T, 64, kWKMajor, kS, kB>)}};
}

MEMOPT_REGISTER_KERNELS(kGemmSplitkKernels, splitk_kernels<false>("gemm"));
MEMOPT_REGISTER_KERNELS(kLinearSplitkKernels, splitk_kernels<true>("linear"));

}  // namespace

}  // namespace memopt
