// CUDA launchers of memopt::gemm and memopt::linear. Each wrapper follows one
// order: check inputs -> pick the rung -> allocate -> launch on the current
// stream under a device guard -> check the launch. Rungs live one per file in
// kernels/, numbered in ladder order.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/activation.h"
#include "common/checks.h"
#include "common/cuda_launch.cuh"
#include "common/dispatch.h"
#include "common/variants.h"
#include "gemm/gemm_common.h"
#include "gemm/kernels/v01_naive.cuh"

namespace memopt {
namespace {

const VariantTable kGemmCudaVariants("gemm", c10::DeviceType::CUDA, {{"naive"}});
const VariantTable kLinearCudaVariants("linear", c10::DeviceType::CUDA, {{"naive"}});

// The one rung so far; issue 3's ladder replaces this with a shape heuristic.
const std::string kAutoRung = "naive";

// out [M, N] = act(a [M, K] @ b [K, N] + bias [N]); a and b of any strides.
at::Tensor launch_matmul(const at::Tensor& a, const at::Tensor& b,
                         const std::optional<at::Tensor>& bias, Activation act) {
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  const c10::cuda::CUDAGuard device_guard(a.device());
  at::Tensor out = at::empty({M, N}, a.options());
  if (out.numel() == 0) return out;
  TORCH_CHECK(ceil_div<int64_t>(N, kNaiveBlockCols) <= kMaxGridYZ,
              "memopt: the naive rung supports N up to ", kMaxGridYZ * kNaiveBlockCols,
              " output columns, got N = ", N);
  const at::Tensor bias_c =
      bias.has_value() && bias->defined() ? bias->contiguous() : at::Tensor();
  const dim3 block(kNaiveBlockRows, kNaiveBlockCols);
  const dim3 grid(static_cast<unsigned>(ceil_div<int64_t>(M, kNaiveBlockRows)),
                  static_cast<unsigned>(ceil_div<int64_t>(N, kNaiveBlockCols)));
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  MEMOPT_DISPATCH_FLOAT_TYPES(a.scalar_type(), "memopt_gemm_naive", [&] {
    gemm_naive_kernel<scalar_t><<<grid, block, 0, stream>>>(
        a.const_data_ptr<scalar_t>(), a.stride(0), a.stride(1), b.const_data_ptr<scalar_t>(),
        b.stride(0), b.stride(1),
        bias_c.defined() ? bias_c.const_data_ptr<scalar_t>() : nullptr,
        out.mutable_data_ptr<scalar_t>(), M, N, K, act);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return out;
}

at::Tensor gemm_cuda(const at::Tensor& a, const at::Tensor& b, c10::string_view variant) {
  check_gemm_inputs(a, b);
  kGemmCudaVariants.select(variant, capability_of(a), kAutoRung);
  return launch_matmul(a, b, std::nullopt, Activation::none);
}

at::Tensor linear_cuda(const at::Tensor& input, const at::Tensor& weight,
                       const std::optional<at::Tensor>& bias, c10::string_view activation,
                       c10::string_view variant) {
  check_linear_inputs(input, weight, bias);
  const Activation act = parse_activation(std::string(activation));
  kLinearCudaVariants.select(variant, capability_of(input), kAutoRung);
  // weight [N, K] read as B [K, N] through swapped strides: no transposing copy.
  const at::Tensor out = launch_matmul(flatten_to_rows(input), weight.t(), bias, act);
  return out.view(linear_output_sizes(input, weight.size(0)));
}

}  // namespace

TORCH_LIBRARY_IMPL(memopt, CUDA, m) {
  m.impl("gemm", &gemm_cuda);
  m.impl("linear", &linear_cuda);
}

}  // namespace memopt
