// The wgmma rung's 64-row tiles (64 x 128, 64 x 64) in 2-CTA clusters along M: the two
// CTAs of a pair own vertically adjacent tiles, load half of their common B
// (weight) tile each and multicast it into both, so each weight byte leaves
// L2 once for two tiles. For the medium-M shapes whose small tiles re-read B
// for every 64 rows (gemm_plan.cpp's wgmma_cluster says where). A file of its
// own so that its kernels compile beside the unclustered ones. ATen-free.
#include <cuda_bf16.h>

#include "common/kernel_registry.h"
#include "gemm/half_gemm.h"
#include "gemm/wgmma_launch.cuh"

namespace memopt {

bool launch_gemm_wgmma_cluster2_64(const HalfGemmArgs& p, cudaStream_t stream) {
  if (p.tile == WgmmaTile::m64n128) {
    return wgmma_launch::launch_cluster2<wgmma::Tile<64, 128>>(p, stream);
  }
  if (p.tile == WgmmaTile::m64n64) {
    return wgmma_launch::launch_cluster2<wgmma::Tile<64, 64>>(p, stream);
  }
  return false;
}

// kernel_info (common/kernel_registry.h): the bfloat16 cluster kernels for
// linear's weight [N, K], which every tile here has.
namespace {

std::vector<KernelEntry> cluster2_kernels() {
  return {
      {"linear", "wgmma", "bfloat16, 64 x 128 tiles, 2-CTA clusters sharing B, TMA stores",
       kernel_address(wgmma::gemm_wgmma_kernel<__nv_bfloat16, wgmma::Tile<64, 128>, true, 2,
                                               wgmma::Tile<64, 128>::kOutBoxes>)},
      {"linear", "wgmma", "bfloat16, 64 x 64 tiles, 2-CTA clusters sharing B, TMA stores",
       kernel_address(wgmma::gemm_wgmma_kernel<__nv_bfloat16, wgmma::Tile<64, 64>, true, 2,
                                               wgmma::Tile<64, 64>::kOutBoxes>)},
  };
}

MEMOPT_REGISTER_KERNELS(kLinearCluster2Tiles64Kernels, cluster2_kernels());

}  // namespace

}  // namespace memopt
