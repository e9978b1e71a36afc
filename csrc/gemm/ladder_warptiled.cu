// Launcher of rung 8 (warptiled), in a file of its own: its six kernels (two
// shapes x three B layouts) are the slowest of the ladder to compile, and a
// separate translation unit builds beside ladder_tiled.cu on a second core.
// No ATen headers: the caller (gemm_cuda.cu) checks the launch.
#include <cuda_runtime.h>

#include "common/device_info.h"
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

}  // namespace memopt
