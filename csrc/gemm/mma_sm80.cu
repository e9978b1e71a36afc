// Launcher of the mma rung (kernels/mma_sm80.cuh): bf16 / fp16 GEMM with
// mma.sync for sm_80+ GPUs, Hopper included. Picks the shape (Large, or Small
// for grids under one Large tile per SM), the element type, B's layout and
// whether 16-byte cp.async is safe, each a template argument of the kernel.
// No ATen headers: the caller (gemm_cuda.cu) checks the launch.
#include <cuda_runtime.h>

#include <cstdint>

#include "common/device_info.h"
#include "common/kernel_registry.h"
#include "gemm/half_gemm.h"
#include "gemm/kernels/mma_sm80.cuh"

namespace memopt {
namespace {

bool is_16_byte_aligned(const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; }

// 16-byte cp.async needs every chunk address 16-byte aligned: the base
// pointers, and each row start (8 elements of 2 bytes). An operand of one
// row never uses its stride.
bool operands_allow_cp_async_16(const HalfGemmArgs& p) {
  const int64_t b_rows = p.b_k_major ? p.N : p.K;
  return is_16_byte_aligned(p.a) && is_16_byte_aligned(p.b) &&
         (p.M == 1 || p.a_stride_m % 8 == 0) && (b_rows == 1 || p.b_stride % 8 == 0);
}

int64_t tile_count(const HalfGemmArgs& p, int64_t block_m, int64_t block_n) {
  return ((p.M + block_m - 1) / block_m) * ((p.N + block_n - 1) / block_n);
}

// One kernel of configuration Cfg: a 1-D grid (the kernel orders its tiles
// in L2 groups; 2^31 - 1 blocks of 128 x 128 cover any output that fits in
// memory), dynamic shared memory opted in past 48 KB.
template <typename Cfg, typename T, bool kBKMajor, bool kAligned>
void launch_config(const HalfGemmArgs& p, cudaStream_t stream) {
  constexpr int kSmemBytes = Cfg::kSmemBytes;
  constexpr auto kernel = mma_sm80::gemm_mma_kernel<Cfg, T, kBKMajor, kAligned>;
  if constexpr (kSmemBytes > 48 * 1024) opt_in_shared_memory_once<kernel>(kSmemBytes);
  const unsigned grid = static_cast<unsigned>(tile_count(p, Cfg::kBlockM, Cfg::kBlockN));
  kernel<<<grid, Cfg::kThreads, kSmemBytes, stream>>>(p);
}

// Turns the run-time facts (B's layout, alignment) into template arguments.
template <typename Cfg, typename T>
void launch_typed(const HalfGemmArgs& p, cudaStream_t stream) {
  const bool aligned = operands_allow_cp_async_16(p);
  if (p.b_k_major && aligned) {
    launch_config<Cfg, T, true, true>(p, stream);
  } else if (p.b_k_major) {
    launch_config<Cfg, T, true, false>(p, stream);
  } else if (aligned) {
    launch_config<Cfg, T, false, true>(p, stream);
  } else {
    launch_config<Cfg, T, false, false>(p, stream);
  }
}

template <typename Cfg>
void launch_shape(const HalfGemmArgs& p, cudaStream_t stream) {
  if (p.dtype == HalfType::bf16) {
    launch_typed<Cfg, __nv_bfloat16>(p, stream);
  } else {
    launch_typed<Cfg, __half>(p, stream);
  }
}

}  // namespace

// Large's 128 x 256 tiles run one block an SM; when they number fewer than
// the SMs, Small's 128 x 128 tiles (two blocks an SM) give the grid twice the
// blocks. The threshold mirrors warptiled's; to be re-measured on the H200.
void launch_gemm_mma(const HalfGemmArgs& p, cudaStream_t stream) {
  if (tile_count(p, mma_sm80::Large::kBlockM, mma_sm80::Large::kBlockN) < sm_count()) {
    launch_shape<mma_sm80::Small>(p, stream);
  } else {
    launch_shape<mma_sm80::Large>(p, stream);
  }
}

// kernel_info (common/kernel_registry.h): both shapes in bfloat16 (the tensor-
// core benchmark's dtype) with 16-byte cp.async (aligned operands), for gemm's
// row-major b and for linear's weight [N, K].
namespace {

template <bool kBKMajor>
std::vector<KernelEntry> mma_kernels(const char* op) {
  using mma_sm80::gemm_mma_kernel;
  return {{op, "mma", "bfloat16, 128 x 256 tiles",
           kernel_address(gemm_mma_kernel<mma_sm80::Large, __nv_bfloat16, kBKMajor, true>)},
          {op, "mma", "bfloat16, 128 x 128 tiles (grids under one 128 x 256 tile an SM)",
           kernel_address(gemm_mma_kernel<mma_sm80::Small, __nv_bfloat16, kBKMajor, true>)}};
}

MEMOPT_REGISTER_KERNELS(kGemmMmaKernels, mma_kernels<false>("gemm"));
MEMOPT_REGISTER_KERNELS(kLinearMmaKernels, mma_kernels<true>("linear"));

}  // namespace

}  // namespace memopt
