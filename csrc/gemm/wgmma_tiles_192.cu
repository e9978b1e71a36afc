// The wgmma rung's 192-column tiles (128 x 192: two consumer warpgroups, 96
// accumulators a thread, 4 stages of 40 KB beside three staged boxes a
// consumer; 64 x 192: one consumer, 6 stages of 32 KB). What they are for:
// the wave count. Where N / 256 or N / 128 tiles leave the last of the waves
// over 132 SMs mostly idle, N / 192 can fill whole waves (M = 256, N = 12288:
// 128 tiles of 128 x 192 against 2.9 waves of 128 x 64; M = 512, N = 6144:
// 128 tiles against 1.5 waves of 128 x 128). The launch is wgmma_launch.cuh's;
// launch_gemm_wgmma (wgmma_sm90.cu) dispatches here on HalfGemmArgs::tile, as
// gemm_plan.cpp chose. A file of its own so that its kernels compile beside
// the others'. ATen-free.
#include <cuda_bf16.h>

#include "common/kernel_registry.h"
#include "gemm/half_gemm.h"
#include "gemm/wgmma_launch.cuh"

namespace memopt {

void launch_gemm_wgmma_128x192(const HalfGemmArgs& p, cudaStream_t stream) {
  wgmma_launch::launch_tile<wgmma::Tile<128, 192>>(p, stream);
}

void launch_gemm_wgmma_64x192(const HalfGemmArgs& p, cudaStream_t stream) {
  wgmma_launch::launch_tile<wgmma::Tile<64, 192>>(p, stream);
}

// kernel_info (common/kernel_registry.h): each tile's bfloat16 kernel with the
// TMA-store epilogue, for gemm's row-major b and for linear's weight [N, K].
namespace {

template <bool kBKMajor>
std::vector<KernelEntry> tile_kernels(const char* op) {
  using wgmma_launch::tma_store_tile_entry;
  return {
      tma_store_tile_entry<wgmma::Tile<128, 192>, kBKMajor>(
          op, "bfloat16, 128 x 192 tiles, epilogue through TMA stores"),
      tma_store_tile_entry<wgmma::Tile<64, 192>, kBKMajor>(
          op, "bfloat16, 64 x 192 tiles, epilogue through TMA stores"),
  };
}

MEMOPT_REGISTER_KERNELS(kGemmTiles192Kernels, tile_kernels<false>("gemm"));
MEMOPT_REGISTER_KERNELS(kLinearTiles192Kernels, tile_kernels<true>("linear"));

}  // namespace

}  // namespace memopt
