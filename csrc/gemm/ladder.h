// The fp32 GEMM ladder's launch interface, free of ATen headers so the kernel
// files compile in seconds and in parallel. gemm_cuda.cu turns tensors into a
// GemmArgs, picks a rung and calls its launcher.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "common/activation.h"

namespace memopt {

// out[m, n] = act(sum_k A[m, k] * B[k, n] + bias[n]), fp32 in and out.
// A[m, k] lives at a[m * a_stride_m + k * a_stride_k], B[k, n] at
// b[k * b_stride_k + n * b_stride_n]; out is [M, N] contiguous.
struct GemmArgs {
  const float* a;
  int64_t a_stride_m, a_stride_k;
  const float* b;
  int64_t b_stride_k, b_stride_n;
  const float* bias;  // [N], or nullptr
  float* out;
  int64_t M, N, K;
  Activation act;
};

// What a rung needs of its operands' layout; gemm_cuda.cu copies an operand
// to the layout when it has another.
enum class OperandLayout {
  any,             // any strides (naive, coalesced)
  row_major_a,     // A with unit k-stride; B row-major [K, N] or column-major (W [N, K])
};

// Rungs 2-8, one launcher each (defined in ladder_*.cu). Each requires M, N,
// K >= 1 and handles every tail inside its kernel.
void launch_gemm_coalesced(const GemmArgs& p, cudaStream_t stream);
void launch_gemm_smem_tiled(const GemmArgs& p, cudaStream_t stream);
void launch_gemm_smem_padded(const GemmArgs& p, cudaStream_t stream);
void launch_gemm_double_buffered(const GemmArgs& p, cudaStream_t stream);
void launch_gemm_register_blocked(const GemmArgs& p, cudaStream_t stream);
void launch_gemm_vectorized(const GemmArgs& p, cudaStream_t stream);
void launch_gemm_warptiled(const GemmArgs& p, cudaStream_t stream);

}  // namespace memopt
