// The wgmma rung's 64-row tiles (64 x 256, 64 x 128, 64 x 64): one consumer warpgroup
// (256 threads), for the medium-M shapes where 128 x 256 tiles are fewer than the SMs. The
// launch is wgmma_launch.cuh's; launch_gemm_wgmma (wgmma_sm90.cu) dispatches
// here on HalfGemmArgs::tile, as gemm_plan.cpp chose. A file of its own so
// that its kernels compile beside the others'. ATen-free.
#include <cuda_bf16.h>

#include "common/kernel_registry.h"
#include "gemm/half_gemm.h"
#include "gemm/wgmma_launch.cuh"

namespace memopt {

void launch_gemm_wgmma_64x256(const HalfGemmArgs& p, cudaStream_t stream) {
  wgmma_launch::launch_tile<wgmma::Tile<64, 256>>(p, stream);
}

void launch_gemm_wgmma_64x128(const HalfGemmArgs& p, cudaStream_t stream) {
  wgmma_launch::launch_tile<wgmma::Tile<64, 128>>(p, stream);
}

void launch_gemm_wgmma_64x64(const HalfGemmArgs& p, cudaStream_t stream) {
  wgmma_launch::launch_tile<wgmma::Tile<64, 64>>(p, stream);
}

// kernel_info (common/kernel_registry.h): each tile's bfloat16 kernel with the
// TMA-store epilogue, for gemm's row-major b and for linear's weight [N, K].
namespace {

template <bool kBKMajor>
std::vector<KernelEntry> tile_kernels(const char* op) {
  using wgmma_launch::tma_store_tile_entry;
  return {
      tma_store_tile_entry<wgmma::Tile<64, 256>, kBKMajor>(
          op, "bfloat16, 64 x 256 tiles, epilogue through TMA stores"),
      tma_store_tile_entry<wgmma::Tile<64, 128>, kBKMajor>(
          op, "bfloat16, 64 x 128 tiles, epilogue through TMA stores"),
      tma_store_tile_entry<wgmma::Tile<64, 64>, kBKMajor>(
          op, "bfloat16, 64 x 64 tiles, epilogue through TMA stores"),
  };
}

MEMOPT_REGISTER_KERNELS(kGemmTiles64Kernels, tile_kernels<false>("gemm"));
MEMOPT_REGISTER_KERNELS(kLinearTiles64Kernels, tile_kernels<true>("linear"));

}  // namespace

}  // namespace memopt
