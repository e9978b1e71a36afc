// CUDA launchers of memopt::layer_norm and memopt::rms_norm: check -> pick the
// rung -> lay out rows -> launch on the current stream under a device guard ->
// check the launch. Rungs live one per file in kernels/.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_launch.cuh"
#include "common/checks.h"
#include "common/dispatch.h"
#include "common/variants.h"
#include "norm/kernels/v01_naive.cuh"
#include "norm/norm_common.h"

namespace memopt {
namespace {

const VariantTable kLayerNormCudaVariants("layer_norm", c10::DeviceType::CUDA, {{"naive"}});
const VariantTable kRmsNormCudaVariants("rms_norm", c10::DeviceType::CUDA, {{"naive"}});

// The one rung so far; issue 5's ladder replaces this with a shape heuristic.
const std::string kAutoRung = "naive";

template <bool kRms>
void launch_norm(const NormRows& p) {
  if (p.out.numel() == 0) return;
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  const unsigned blocks = static_cast<unsigned>(ceil_div<int64_t>(p.rows, kNormNaiveThreads));
  MEMOPT_DISPATCH_FLOAT_TYPES(p.input.scalar_type(), "memopt_norm_naive", [&] {
    const auto launch = [&](auto param_zero) {
      using param_t = decltype(param_zero);
      norm_naive_kernel<scalar_t, param_t, kRms><<<blocks, kNormNaiveThreads, 0, stream>>>(
          p.input.const_data_ptr<scalar_t>(),
          p.weight.defined() ? p.weight.const_data_ptr<param_t>() : nullptr,
          p.bias.defined() ? p.bias.const_data_ptr<param_t>() : nullptr,
          p.out.mutable_data_ptr<scalar_t>(), p.rows, p.row_length, p.eps);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    };
    if (p.fp32_params) {
      launch(float{});
    } else {
      launch(scalar_t{});
    }
  });
}

at::Tensor layer_norm_cuda(const at::Tensor& input, c10::SymIntArrayRef normalized_shape,
                           const std::optional<at::Tensor>& weight,
                           const std::optional<at::Tensor>& bias, double eps,
                           c10::string_view variant) {
  const int64_t row_length =
      check_norm_inputs("layer_norm", input, normalized_shape, weight, bias);
  kLayerNormCudaVariants.select(variant, capability_of(input), kAutoRung);
  const c10::cuda::CUDAGuard device_guard(input.device());
  const NormRows p = prepare_norm_rows(input, row_length, weight, bias, eps);
  launch_norm</*kRms=*/false>(p);
  return p.out;
}

at::Tensor rms_norm_cuda(const at::Tensor& input, c10::SymIntArrayRef normalized_shape,
                         const std::optional<at::Tensor>& weight, std::optional<double> eps,
                         c10::string_view variant) {
  const int64_t row_length =
      check_norm_inputs("rms_norm", input, normalized_shape, weight, std::nullopt);
  kRmsNormCudaVariants.select(variant, capability_of(input), kAutoRung);
  const c10::cuda::CUDAGuard device_guard(input.device());
  const NormRows p = prepare_norm_rows(input, row_length, weight, std::nullopt, eps);
  launch_norm</*kRms=*/true>(p);
  return p.out;
}

}  // namespace

TORCH_LIBRARY_IMPL(memopt, CUDA, m) {
  m.impl("layer_norm", &layer_norm_cuda);
  m.impl("rms_norm", &rms_norm_cuda);
}

}  // namespace memopt
