// The wgmma_streamk rung's 128 x 128 tile (wgmma_streamk_sm90.cu dispatches
// here): a file of its own so its kernels compile beside the 128 x 256 ones.
// ATen-free.
#include <cuda_bf16.h>

#include "common/kernel_registry.h"
#include "gemm/half_gemm.h"
#include "gemm/wgmma_launch.cuh"

namespace memopt {

using StreamKTile128 = wgmma::Tile<128, 128>;

void launch_gemm_wgmma_streamk_128x128(const HalfGemmArgs& p, cudaStream_t stream) {
  wgmma_launch::launch_epilogue_tma<StreamKTile128, 1, StreamKTile128::kOutBoxes, true>(p, stream);
}

namespace {

template <bool kBKMajor>
std::vector<KernelEntry> streamk_128_kernels(const char* op) {
  return {{op, "wgmma_streamk", "bfloat16, 128 x 128 tiles, epilogue through TMA stores",
           kernel_address(wgmma::gemm_wgmma_kernel<__nv_bfloat16, StreamKTile128, kBKMajor, 1,
                                                   StreamKTile128::kOutBoxes, true>)}};
}

MEMOPT_REGISTER_KERNELS(kGemmStreamk128Kernels, streamk_128_kernels<false>("gemm"));
MEMOPT_REGISTER_KERNELS(kLinearStreamk128Kernels, streamk_128_kernels<true>("linear"));

}  // namespace

}  // namespace memopt
