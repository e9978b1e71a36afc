// Launchers of the register-tiled rungs 6 and 7 (rung 8: ladder_warptiled.cu). No ATen headers: the caller
// (gemm_cuda.cu) checks the launch and owns every tensor.
#include "common/kernel_registry.h"
#include "gemm/kernels/v06_register_blocked.cuh"
#include "gemm/kernels/v07_vectorized.cuh"

namespace memopt {
namespace {

// Turns the run-time layout facts into the kernels' template flags: B's
// layout, and whether both operands allow 16-byte loads.
template <typename Launch>
void with_layout(const GemmArgs& p, Launch launch) {
  with_b_layout(p, [&](auto col_major) {
    if (operands_allow_vec4(p, decltype(col_major)::value)) {
      launch(std::true_type{}, col_major);
    } else {
      launch(std::false_type{}, col_major);
    }
  });
}

}  // namespace

void launch_gemm_register_blocked(const GemmArgs& p, cudaStream_t stream) {
  using namespace register_blocked;
  for_each_row_chunk(p, kBlockM, [&](const GemmArgs& c) {
    const dim3 grid(tiles(c.N, kBlockN), tiles(c.M, kBlockM));
    with_b_layout(c, [&](auto col_major) {
      gemm_register_blocked_kernel<decltype(col_major)::value><<<grid, kThreads, 0, stream>>>(c);
    });
  });
}

void launch_gemm_vectorized(const GemmArgs& p, cudaStream_t stream) {
  using namespace vectorized;
  for_each_row_chunk(p, kBlockM, [&](const GemmArgs& c) {
    const dim3 grid(tiles(c.N, kBlockN), tiles(c.M, kBlockM));
    with_layout(c, [&](auto vec, auto col_major) {
      gemm_vectorized_kernel<decltype(vec)::value, decltype(col_major)::value>
          <<<grid, kThreads, 0, stream>>>(c);
    });
  });
}

// kernel_info (common/kernel_registry.h): each rung's kernel for gemm's
// row-major b and for linear's weight (a column-major B); vectorized with the
// 16-byte loads that aligned operands (every benchmark's) take.
namespace {

template <bool kBColMajor>
std::vector<KernelEntry> tiled_rung_kernels(const char* op) {
  return {{op, "register_blocked", "float32",
           kernel_address(gemm_register_blocked_kernel<kBColMajor>)},
          {op, "vectorized", "float32, 16-byte loads",
           kernel_address(gemm_vectorized_kernel<true, kBColMajor>)}};
}

MEMOPT_REGISTER_KERNELS(kGemmTiledRungKernels, tiled_rung_kernels<false>("gemm"));
MEMOPT_REGISTER_KERNELS(kLinearTiledRungKernels, tiled_rung_kernels<true>("linear"));

}  // namespace

}  // namespace memopt
