// CPU reference kernel of memopt::softmax: max, sum of exponentials, then the
// normalized write, in fp32, one softmax row at a time, rows over threads.
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <cmath>
#include <limits>

#include "common/checks.h"
#include "common/dispatch.h"
#include "common/nan_max.h"
#include "common/variants.h"
#include "softmax/softmax_common.h"

namespace memopt {
namespace {

const VariantTable kSoftmaxCpuVariants("softmax", c10::DeviceType::CPU, {{"reference"}});

template <typename in_t, typename out_t>
void softmax_rows_cpu(const SoftmaxRows& p) {
  const in_t* x = p.input.const_data_ptr<in_t>();
  out_t* y = p.out.mutable_data_ptr<out_t>();
  const int64_t D = p.dim_size, inner = p.inner;
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, D));
  at::parallel_for(0, p.outer * inner, grain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      // Input rows of `outer` in_stride apart; the output is contiguous.
      const int64_t base = (r / inner) * p.in_stride + r % inner;
      const int64_t out_base = (r / inner) * D * inner + r % inner;
      float max_v = -std::numeric_limits<float>::infinity();
      for (int64_t d = 0; d < D; ++d) {
        max_v = nan_propagating_max(max_v, static_cast<float>(x[base + d * inner]));
      }
      // The sum in double: a float sum of 65536 terms drifted 7e-5 from float64
      // (the CUDA rungs keep 2e-5; measured on finfo.min-masked rows).
      double sum = 0.0;
      for (int64_t d = 0; d < D; ++d) sum += std::exp(static_cast<float>(x[base + d * inner]) - max_v);
      const float inv_sum = static_cast<float>(1.0 / sum);
      for (int64_t d = 0; d < D; ++d) {
        y[out_base + d * inner] =
            static_cast<out_t>(std::exp(static_cast<float>(x[base + d * inner]) - max_v) * inv_sum);
      }
    }
  });
}

at::Tensor softmax_cpu(const at::Tensor& input, int64_t dim,
                       std::optional<c10::ScalarType> dtype, c10::string_view variant) {
  const int64_t wrapped_dim = check_softmax_inputs(input, dim, dtype);
  kSoftmaxCpuVariants.select(variant, 0, "reference");
  const SoftmaxRows p = prepare_softmax_rows(input, wrapped_dim, dtype);
  if (p.out.numel() == 0) return p.out;
  MEMOPT_DISPATCH_FLOAT_TYPES(p.input.scalar_type(), "memopt_softmax_cpu", [&] {
    if (p.widen_to_fp32) {
      softmax_rows_cpu<scalar_t, float>(p);
    } else {
      softmax_rows_cpu<scalar_t, scalar_t>(p);
    }
  });
  return p.out;
}

}  // namespace

TORCH_LIBRARY_IMPL(memopt, CPU, m) { m.impl("softmax", &softmax_cpu); }

}  // namespace memopt
