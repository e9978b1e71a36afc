// Launcher of rung 8 (warptiled), in a file of its own: its six kernels (two
// shapes x three B layouts) are the slowest of the ladder to compile, and a
// separate translation unit builds beside ladder_tiled.cu on a second core.
// No ATen headers: the caller (gemm_cuda.cu) checks the launch.
#include <cuda_runtime.h>

#include "common/device_info.h"
#include "common/kernel_registry.h"
#include "gemm/kernels/v08_warptiled.cuh"

namespace memopt {

// Tuned's 128 x 256 tiles run one block an SM; when they number fewer than the
// SMs, Small's 128 x 128 tiles (two blocks an SM) give the grid twice the
// blocks: at 1024^3, 64 blocks instead of 32 on 132 SMs.
void launch_gemm_warptiled(const GemmArgs& p, cudaStream_t stream) {
  const int64_t big_tiles = static_cast<int64_t>(tiles(p.M, warptiled::Tuned::kBlockM)) *
                            tiles(p.N, warptiled::Tuned::kBlockN);
  if (big_tiles < sm_count()) {
    launch_warptiled<warptiled::Small>(p, stream);
  } else {
    launch_warptiled<warptiled::Tuned>(p, stream);
  }
}

// kernel_info (common/kernel_registry.h): both shapes, for gemm's row-major b
// (16-byte B loads, as aligned operands take) and for linear's weight (a
// column-major B, copied 4 bytes at a time).
namespace {

template <bool kBColMajor>
std::vector<KernelEntry> warptiled_kernels(const char* op) {
  constexpr bool kVec = !kBColMajor;
  return {{op, "warptiled", "float32, 128 x 256 tiles",
           kernel_address(gemm_warptiled_kernel<warptiled::Tuned, kVec, kBColMajor>)},
          {op, "warptiled", "float32, 128 x 128 tiles (grids under one 128 x 256 tile an SM)",
           kernel_address(gemm_warptiled_kernel<warptiled::Small, kVec, kBColMajor>)}};
}

MEMOPT_REGISTER_KERNELS(kGemmWarptiledKernels, warptiled_kernels<false>("gemm"));
MEMOPT_REGISTER_KERNELS(kLinearWarptiledKernels, warptiled_kernels<true>("linear"));

}  // namespace

}  // namespace memopt
