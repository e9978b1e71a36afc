// CUDA launcher of memopt::softmax: check -> pick the rung -> lay out rows ->
// launch on the current stream under a device guard -> check the launch.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/checks.h"
#include "common/cuda_launch.cuh"
#include "common/dispatch.h"
#include "common/variants.h"
#include "softmax/kernels/v01_naive.cuh"
#include "softmax/softmax_common.h"

namespace memopt {
namespace {

const VariantTable kSoftmaxCudaVariants("softmax", c10::DeviceType::CUDA, {{"naive"}});

// The one rung so far; issue 5's ladder replaces this with a shape heuristic.
const std::string kAutoRung = "naive";

at::Tensor softmax_cuda(const at::Tensor& input, int64_t dim,
                        std::optional<c10::ScalarType> dtype, c10::string_view variant) {
  const int64_t wrapped_dim = check_softmax_inputs(input, dim, dtype);
  kSoftmaxCudaVariants.select(variant, capability_of(input), kAutoRung);
  const c10::cuda::CUDAGuard device_guard(input.device());
  const SoftmaxRows p = prepare_softmax_rows(input, wrapped_dim, dtype);
  if (p.out.numel() == 0) return p.out;
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  const unsigned blocks =
      static_cast<unsigned>(ceil_div<int64_t>(p.outer * p.inner, kSoftmaxNaiveThreads));
  MEMOPT_DISPATCH_FLOAT_TYPES(p.input.scalar_type(), "memopt_softmax_naive", [&] {
    const auto launch = [&](auto out_zero) {
      using out_t = decltype(out_zero);
      softmax_naive_kernel<scalar_t, out_t><<<blocks, kSoftmaxNaiveThreads, 0, stream>>>(
          p.input.const_data_ptr<scalar_t>(), p.out.mutable_data_ptr<out_t>(), p.outer,
          p.dim_size, p.inner);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    };
    if (p.widen_to_fp32) {
      launch(float{});
    } else {
      launch(scalar_t{});
    }
  });
  return p.out;
}

}  // namespace

TORCH_LIBRARY_IMPL(memopt, CUDA, m) { m.impl("softmax", &softmax_cuda); }

}  // namespace memopt
