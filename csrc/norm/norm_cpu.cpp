// CPU reference kernels of memopt::layer_norm and memopt::rms_norm (and of the
// fused add_layer_norm / add_rms_norm: the rounded sum, then the norm): one row at
// a time, statistics in fp32 by two passes (mean, then squared deviations:
// no catastrophic cancellation of E[x^2] - E[x]^2), rows spread over threads.
#include <ATen/Parallel.h>
#include <ATen/ops/add.h>
#include <torch/library.h>

#include <cmath>
#include <tuple>

#include "common/checks.h"
#include "common/dispatch.h"
#include "common/variants.h"
#include "norm/norm_common.h"

namespace memopt {
namespace {

const VariantTable kLayerNormCpuVariants("layer_norm", c10::DeviceType::CPU, {{"reference"}});
const VariantTable kRmsNormCpuVariants("rms_norm", c10::DeviceType::CPU, {{"reference"}});
const VariantTable kAddLayerNormCpuVariants("add_layer_norm", c10::DeviceType::CPU,
                                            {{"reference"}});
const VariantTable kAddRmsNormCpuVariants("add_rms_norm", c10::DeviceType::CPU, {{"reference"}});

template <typename scalar_t, typename param_t>
void normalize_rows_cpu(const NormRows& p, bool rms) {
  const scalar_t* x = p.input.const_data_ptr<scalar_t>();
  const param_t* w = p.weight.defined() ? p.weight.const_data_ptr<param_t>() : nullptr;
  const param_t* b = p.bias.defined() ? p.bias.const_data_ptr<param_t>() : nullptr;
  scalar_t* y = p.out.mutable_data_ptr<scalar_t>();
  const int64_t N = p.row_length;
  // About 16k elements per task before a row range is worth a thread.
  const int64_t grain = std::max<int64_t>(1, 16384 / N);
  at::parallel_for(0, p.rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const scalar_t* xr = x + r * p.in_stride;
      scalar_t* yr = y + r * N;
      float mean = 0.f;
      if (!rms) {
        float sum = 0.f;
        for (int64_t i = 0; i < N; ++i) sum += static_cast<float>(xr[i]);
        mean = sum / static_cast<float>(N);
      }
      float sq = 0.f;
      for (int64_t i = 0; i < N; ++i) {
        const float d = static_cast<float>(xr[i]) - mean;
        sq += d * d;
      }
      const float inv = 1.f / std::sqrt(sq / static_cast<float>(N) + p.eps);
      for (int64_t i = 0; i < N; ++i) {
        float v = (static_cast<float>(xr[i]) - mean) * inv;
        if (w != nullptr) v *= static_cast<float>(w[i]);
        if (b != nullptr) v += static_cast<float>(b[i]);
        yr[i] = static_cast<scalar_t>(v);
      }
    }
  });
}

void normalize_cpu(const NormRows& p, bool rms) {
  if (p.out.numel() == 0) return;
  MEMOPT_DISPATCH_FLOAT_TYPES(p.input.scalar_type(), "memopt_norm_cpu", [&] {
    if (p.fp32_params) {
      normalize_rows_cpu<scalar_t, float>(p, rms);
    } else {
      normalize_rows_cpu<scalar_t, scalar_t>(p, rms);
    }
  });
}

at::Tensor layer_norm_cpu(const at::Tensor& input, c10::SymIntArrayRef normalized_shape,
                          const std::optional<at::Tensor>& weight,
                          const std::optional<at::Tensor>& bias, double eps,
                          c10::string_view variant) {
  const int64_t row_length =
      check_norm_inputs("layer_norm", input, normalized_shape, weight, bias);
  kLayerNormCpuVariants.select(variant, 0, "reference");
  const NormRows p = prepare_norm_rows(input, row_length, weight, bias, eps);
  normalize_cpu(p, /*rms=*/false);
  return p.out;
}

at::Tensor rms_norm_cpu(const at::Tensor& input, c10::SymIntArrayRef normalized_shape,
                        const std::optional<at::Tensor>& weight, std::optional<double> eps,
                        c10::string_view variant) {
  const int64_t row_length =
      check_norm_inputs("rms_norm", input, normalized_shape, weight, std::nullopt);
  kRmsNormCpuVariants.select(variant, 0, "reference");
  const NormRows p = prepare_norm_rows(input, row_length, weight, std::nullopt, eps);
  normalize_cpu(p, /*rms=*/true);
  return p.out;
}

// The fused add + norm references: the sum rounded to the input's dtype (what
// `input + residual` returns), then the norm of that sum.
std::tuple<at::Tensor, at::Tensor> add_layer_norm_cpu(
    const at::Tensor& input, const at::Tensor& residual, c10::SymIntArrayRef normalized_shape,
    const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias, double eps,
    c10::string_view variant) {
  const int64_t row_length =
      check_add_norm_inputs("add_layer_norm", input, residual, normalized_shape, weight, bias);
  kAddLayerNormCpuVariants.select(variant, 0, "reference");
  const at::Tensor sum = at::add(input, residual).contiguous();
  const NormRows p = prepare_norm_rows(sum, row_length, weight, bias, eps);
  normalize_cpu(p, /*rms=*/false);
  return {p.out, sum};
}

std::tuple<at::Tensor, at::Tensor> add_rms_norm_cpu(const at::Tensor& input,
                                                    const at::Tensor& residual,
                                                    c10::SymIntArrayRef normalized_shape,
                                                    const std::optional<at::Tensor>& weight,
                                                    std::optional<double> eps,
                                                    c10::string_view variant) {
  const int64_t row_length = check_add_norm_inputs("add_rms_norm", input, residual,
                                                   normalized_shape, weight, std::nullopt);
  kAddRmsNormCpuVariants.select(variant, 0, "reference");
  const at::Tensor sum = at::add(input, residual).contiguous();
  const NormRows p = prepare_norm_rows(sum, row_length, weight, std::nullopt, eps);
  normalize_cpu(p, /*rms=*/true);
  return {p.out, sum};
}

}  // namespace

TORCH_LIBRARY_IMPL(memopt, CPU, m) {
  m.impl("layer_norm", &layer_norm_cpu);
  m.impl("rms_norm", &rms_norm_cpu);
  m.impl("add_layer_norm", &add_layer_norm_cpu);
  m.impl("add_rms_norm", &add_rms_norm_cpu);
}

}  // namespace memopt
