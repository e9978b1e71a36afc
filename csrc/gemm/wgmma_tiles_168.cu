// The wgmma rung's 128 x 168 tile: two consumer warpgroups, 84 accumulators a
// thread (the bias in registers), 4 stages of 37 KB beside three 64 x 56
// output boxes a consumer (kernels/wgmma_sm90.cuh, Tile). What it is for:
// the wave count at Llama-2's gate_up, N = 22016: 22016 / 168 = 131.05, so
// 132 tile columns, and M = 256 / 512 give 264 / 528 tiles, exactly 2 / 4
// waves of 132 SMs, where 128 x 192 leaves 1.74 waves at M = 256 and 128 x
// 256 a partial last wave at 512 (H200: 79.6 us at 256 in 128 x 192 and
// 145.7 at 512 in 128 x 256, against cuBLAS's 73.5 and 130.8). Measured on
// an H100 (2026-12-05, wgmma_tiles_168_llama_h100.json): 87.4 us at 256 and
// 134.6 at 512, against 128 x 192's 90.5 / 146.3 and cuBLAS's 84.8 / 131.5
// on the same card; not yet on the H200. Linear's weight [N, K] (K-major B)
// in bfloat16 / float16 only: gemm's row-major b loads in 64-column boxes
// and there is no tf32 m64n168. gemm_plan.cpp's wgmma_tile never gives this
// tile another call; the launcher below holds to it as well. A file of its
// own so that its kernels compile beside the others'. ATen-free.
#include <cuda_bf16.h>

#include "common/kernel_registry.h"
#include "gemm/half_gemm.h"
#include "gemm/wgmma_launch.cuh"

namespace memopt {

void launch_gemm_wgmma_128x168(const HalfGemmArgs& p, cudaStream_t stream) {
  // Not reachable from gemm_cuda.cu (wgmma_tile falls back to 128 x 192
  // there): the nearest tile built for every layout and dtype, never a
  // 168-column kernel on an operand it cannot read.
  if (!p.b_k_major || p.dtype == HalfType::tf32) return launch_gemm_wgmma_128x192(p, stream);
  wgmma_launch::launch_tile<wgmma::Tile<128, 168>>(p, stream);
}

// kernel_info (common/kernel_registry.h): the bfloat16 kernel with the
// TMA-store epilogue, linear's weight [N, K] only (gemm's row-major b never
// runs this tile).
namespace {

std::vector<KernelEntry> linear_kernels() {
  return {wgmma_launch::tma_store_tile_entry<wgmma::Tile<128, 168>, true>(
      "linear", "bfloat16, 128 x 168 tiles, epilogue through TMA stores")};
}

MEMOPT_REGISTER_KERNELS(kLinearTiles168Kernels, linear_kernels());

}  // namespace

}  // namespace memopt
