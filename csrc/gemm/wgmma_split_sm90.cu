// Launcher of the wgmma_split rung (kernels/wgmma_split_sm90.cuh): the TMA
// maps, the split, the cluster launch. ATen-free; gemm_cuda.cu calls it on
// compute capability 9.0 with operands that pass wgmma_operands_ok.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "common/cluster_launch.cuh"
#include "common/device_info.h"
#include "common/kernel_registry.h"
#include "gemm/gemm_plan.h"
#include "gemm/half_gemm.h"
#include "gemm/kernels/wgmma_split_sm90.cuh"
#include "gemm/tma_map.h"

namespace memopt {
namespace {

template <typename T, bool kBKMajor>
void launch_typed(const HalfGemmArgs& p, cudaStream_t stream) {
  using namespace wgmma;
  const CUtensorMap map_a = make_tma_map(p.a, p.dtype, p.M, p.K, p.a_stride_m, kBlockM, kBlockK);
  const CUtensorMap map_b = kBKMajor
                                ? make_tma_map(p.b, p.dtype, p.N, p.K, p.b_stride, kBlockN, kBlockK)
                                : make_tma_map(p.b, p.dtype, p.K, p.N, p.b_stride, kBlockK, kBoxN);
  const int64_t tiles = ((p.M + kBlockM - 1) / kBlockM) * ((p.N + kBlockN - 1) / kBlockN);
  const int k_tiles = static_cast<int>((p.K + kBlockK - 1) / kBlockK);
  // p.splits: gemm_plan's wgmma_split_count (or its override), >= 1.
  int splits = std::max(1, std::min({p.splits, kMaxSplits, k_tiles}));
  // Every CTA gets at least one k-tile: 9 k-tiles in 4 splits are 3 + 3 + 3.
  const int kps = (k_tiles + splits - 1) / splits;
  splits = (k_tiles + kps - 1) / kps;
  constexpr auto kernel = gemm_wgmma_split_kernel<T, kBKMajor>;
  opt_in_shared_memory_once<kernel>(kSplitSmemBytes);
  const KernelArgs args{p.out, p.bias, p.M, p.N, p.K, p.act};
  ClusterLaunch cluster(dim3(static_cast<unsigned>(tiles * splits)), dim3(kThreads),
                        dim3(static_cast<unsigned>(splits)), stream, kSplitSmemBytes);
  if (std::getenv("MEMOPT_WGMMA_VERBOSE") != nullptr) {
    const int fits = cluster.max_active_clusters(kernel);
    std::fprintf(stderr,
                 "wgmma_split: %lld tiles x %d splits (%d k-tiles each); "
                 "%d clusters of %d fit at once\n",
                 static_cast<long long>(tiles), splits, kps, fits, splits);
  }
  cluster.launch(kernel, map_a, map_b, args, kps);  // checked by gemm_cuda.cu's launch check
}

// gemm_plan's ClusterFitsQuery: clusters of `splits` CTAs of this kernel
// (197 KB of shared memory each, so one an SM) that the current device runs
// at once, asked once per device and size. Every instantiation has the same
// block and shared memory, so one answers for all.
int cluster_fits(int splits) {
  using namespace wgmma;
  static std::atomic<int> cache[kMaxSplits + 1][kMaxDevices];
  if (splits < 1 || splits > kMaxSplits) return 0;
  // 0 where the runtime cannot say: the plan falls back to sm_count / splits.
  return once_per_device(cache[splits], 0, [&](int) {
    constexpr auto kernel = gemm_wgmma_split_kernel<__nv_bfloat16, true>;
    opt_in_shared_memory_once<kernel>(kSplitSmemBytes);
    ClusterLaunch cluster(dim3(static_cast<unsigned>(splits * sm_count())), dim3(kThreads),
                          dim3(static_cast<unsigned>(splits)), nullptr, kSplitSmemBytes);
    return cluster.max_active_clusters(kernel);
  });
}

struct RegisterFitsQuery {
  RegisterFitsQuery() { register_cluster_fits_query(cluster_fits); }
};
const RegisterFitsQuery kRegisterFitsQuery;

}  // namespace

bool wgmma_split_shape_ok(const HalfGemmArgs& p) {
  using namespace wgmma;
  const int64_t tiles = ((p.M + kBlockM - 1) / kBlockM) * ((p.N + kBlockN - 1) / kBlockN);
  return tiles * kMaxSplits <= (int64_t{1} << 31) - 1;
}

void launch_gemm_wgmma_split(const HalfGemmArgs& p, cudaStream_t stream) {
  if (p.dtype == HalfType::bf16) {
    p.b_k_major ? launch_typed<__nv_bfloat16, true>(p, stream)
                : launch_typed<__nv_bfloat16, false>(p, stream);
  } else {
    p.b_k_major ? launch_typed<__half, true>(p, stream) : launch_typed<__half, false>(p, stream);
  }
}

// kernel_info (common/kernel_registry.h): the bfloat16 kernel for gemm's
// row-major b and for linear's weight [N, K].
namespace {

template <bool kBKMajor>
std::vector<KernelEntry> split_kernels(const char* op) {
  return {{op, "wgmma_split", "bfloat16, 128 x 256 tiles, K split over a cluster",
           kernel_address(wgmma::gemm_wgmma_split_kernel<__nv_bfloat16, kBKMajor>)}};
}

MEMOPT_REGISTER_KERNELS(kGemmSplitKernels, split_kernels<false>("gemm"));
MEMOPT_REGISTER_KERNELS(kLinearSplitKernels, split_kernels<true>("linear"));

}  // namespace

}  // namespace memopt
