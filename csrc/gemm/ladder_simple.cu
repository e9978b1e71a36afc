// Launchers of the one-output-per-thread rungs (2-5). No ATen headers: the
// caller (gemm_cuda.cu) checks the launch and owns every tensor.
#include "common/kernel_registry.h"
#include "gemm/kernels/v02_coalesced.cuh"
#include "gemm/kernels/v03_smem_tiled.cuh"
#include "gemm/kernels/v04_smem_padded.cuh"
#include "gemm/kernels/v05_double_buffered.cuh"

namespace memopt {
namespace {

template <int kPad>
void launch_smem(const GemmArgs& p, cudaStream_t stream) {
  const dim3 block(kSmemTile, kSmemTile);
  for_each_row_chunk(p, kSmemTile, [&](const GemmArgs& c) {
    const dim3 grid(tiles(c.N, kSmemTile), tiles(c.M, kSmemTile));
    with_b_layout(c, [&](auto col_major) {
      gemm_smem_tiled_kernel<kPad, decltype(col_major)::value><<<grid, block, 0, stream>>>(c);
    });
  });
}

}  // namespace

void launch_gemm_coalesced(const GemmArgs& p, cudaStream_t stream) {
  const dim3 block(kCoalescedBlockCols, kCoalescedBlockRows);
  for_each_row_chunk(p, kCoalescedBlockRows, [&](const GemmArgs& c) {
    const dim3 grid(tiles(c.N, kCoalescedBlockCols), tiles(c.M, kCoalescedBlockRows));
    gemm_coalesced_kernel<<<grid, block, 0, stream>>>(c);
  });
}

void launch_gemm_smem_tiled(const GemmArgs& p, cudaStream_t stream) { launch_smem<0>(p, stream); }

void launch_gemm_smem_padded(const GemmArgs& p, cudaStream_t stream) {
  launch_smem<kSmemPaddedPad>(p, stream);
}

void launch_gemm_double_buffered(const GemmArgs& p, cudaStream_t stream) {
  const dim3 block(kSmemTile, kSmemTile);
  for_each_row_chunk(p, kSmemTile, [&](const GemmArgs& c) {
    const dim3 grid(tiles(c.N, kSmemTile), tiles(c.M, kSmemTile));
    with_b_layout(c, [&](auto col_major) {
      gemm_double_buffered_kernel<decltype(col_major)::value><<<grid, block, 0, stream>>>(c);
    });
  });
}

// kernel_info (common/kernel_registry.h): each rung's kernel (float32, the
// ladder's one dtype) for gemm's row-major b and for linear's weight, read as
// a column-major B.
namespace {

template <bool kBColMajor>
std::vector<KernelEntry> simple_rung_kernels(const char* op) {
  return {{op, "coalesced", "float32", kernel_address(gemm_coalesced_kernel)},
          {op, "smem_tiled", "float32", kernel_address(gemm_smem_tiled_kernel<0, kBColMajor>)},
          {op, "smem_padded", "float32",
           kernel_address(gemm_smem_tiled_kernel<kSmemPaddedPad, kBColMajor>)},
          {op, "double_buffered", "float32",
           kernel_address(gemm_double_buffered_kernel<kBColMajor>)}};
}

MEMOPT_REGISTER_KERNELS(kGemmSimpleRungKernels, simple_rung_kernels<false>("gemm"));
MEMOPT_REGISTER_KERNELS(kLinearSimpleRungKernels, simple_rung_kernels<true>("linear"));

}  // namespace

}  // namespace memopt
