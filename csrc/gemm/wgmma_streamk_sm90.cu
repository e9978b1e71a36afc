// Launcher of the wgmma_streamk rung: the persistent wgmma kernel
// (kernels/wgmma_sm90.cuh) with kStreamK, whose work split and fix-up are
// kernels/stream_k.cuh's and whose grid is gemm_plan.h's stream_k_split.
// This file holds the 128 x 256 tile and the dispatch on HalfGemmArgs::tile;
// 128 x 128 is wgmma_streamk_128.cu's, so the two compile in parallel.
// ATen-free; gemm_cuda.cu allocates p.workspace and zeroes its flags first.
#include <cuda_bf16.h>

#include "common/kernel_registry.h"
#include "gemm/half_gemm.h"
#include "gemm/wgmma_launch.cuh"

namespace memopt {

void launch_gemm_wgmma_streamk(const HalfGemmArgs& p, cudaStream_t stream) {
  if (p.tile == WgmmaTile::m128n128) return launch_gemm_wgmma_streamk_128x128(p, stream);
  wgmma_launch::launch_epilogue_tma<wgmma::Wide, 1, wgmma::Wide::kOutBoxes, true>(p, stream);
}

// kernel_info (common/kernel_registry.h): the bfloat16 128 x 256 kernels.
namespace {

template <bool kBKMajor>
std::vector<KernelEntry> streamk_kernels(const char* op) {
  using wgmma::Wide;
  return {{op, "wgmma_streamk", "bfloat16, 128 x 256 tiles, epilogue through TMA stores",
           kernel_address(
               wgmma::gemm_wgmma_kernel<__nv_bfloat16, Wide, kBKMajor, 1, Wide::kOutBoxes, true>)},
          {op, "wgmma_streamk", "bfloat16, 128 x 256 tiles, epilogue from registers (other N)",
           kernel_address(wgmma::gemm_wgmma_kernel<__nv_bfloat16, Wide, kBKMajor, 1, 0, true>)}};
}

MEMOPT_REGISTER_KERNELS(kGemmStreamkKernels, streamk_kernels<false>("gemm"));
MEMOPT_REGISTER_KERNELS(kLinearStreamkKernels, streamk_kernels<true>("linear"));

}  // namespace

}  // namespace memopt
