// CPU reference kernels of memopt::gemm and memopt::linear: correct and simple,
// fp32 accumulation, rows of the output spread over threads with at::parallel_for.
// They serve CPU tensors and are what CI tests.
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include "common/activation.h"
#include "common/checks.h"
#include "common/dispatch.h"
#include "common/variants.h"
#include "gemm/gemm_common.h"

namespace memopt {
namespace {

const VariantTable kGemmCpuVariants("gemm", c10::DeviceType::CPU, {{"reference"}});
const VariantTable kLinearCpuVariants("linear", c10::DeviceType::CPU, {{"reference"}});

// out[m, n] = act(sum_k a[m, k] * w[n, k] + bias[n]) for a [M, K], w [N, K].
// Both operands are first copied to contiguous fp32 so the inner loop runs
// over unit-stride K in fp32 whatever the caller's dtype and strides.
at::Tensor matmul_nt_cpu(const at::Tensor& a, const at::Tensor& w,
                         const std::optional<at::Tensor>& bias, Activation act) {
  const int64_t M = a.size(0), K = a.size(1), N = w.size(0);
  at::Tensor out = at::empty({M, N}, a.options());
  if (out.numel() == 0) return out;
  const at::Tensor a32 = a.to(at::kFloat).contiguous();
  const at::Tensor w32 = w.to(at::kFloat).contiguous();
  const bool has_bias = bias.has_value() && bias->defined();
  const at::Tensor bias32 = has_bias ? bias->to(at::kFloat).contiguous() : at::Tensor();
  const float* a_ptr = a32.data_ptr<float>();
  const float* w_ptr = w32.data_ptr<float>();
  const float* bias_ptr = has_bias ? bias32.data_ptr<float>() : nullptr;
  // About 32k multiply-adds per task before a row range is worth a thread.
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, N * K));
  MEMOPT_DISPATCH_FLOAT_TYPES(out.scalar_type(), "memopt_matmul_nt_cpu", [&] {
    scalar_t* out_ptr = out.data_ptr<scalar_t>();
    at::parallel_for(0, M, grain, [&](int64_t begin, int64_t end) {
      for (int64_t m = begin; m < end; ++m) {
        const float* a_row = a_ptr + m * K;
        for (int64_t n = 0; n < N; ++n) {
          const float* w_row = w_ptr + n * K;
          float acc = 0.f;
          for (int64_t k = 0; k < K; ++k) acc += a_row[k] * w_row[k];
          if (bias_ptr != nullptr) acc += bias_ptr[n];
          out_ptr[m * N + n] = static_cast<scalar_t>(apply_activation(act, acc));
        }
      }
    });
  });
  return out;
}

at::Tensor gemm_cpu(const at::Tensor& a, const at::Tensor& b, c10::string_view variant) {
  check_gemm_inputs(a, b);
  kGemmCpuVariants.select(variant, 0, "reference");
  return matmul_nt_cpu(a, b.t(), std::nullopt, Activation::none);
}

at::Tensor linear_cpu(const at::Tensor& input, const at::Tensor& weight,
                      const std::optional<at::Tensor>& bias, c10::string_view activation,
                      c10::string_view variant) {
  check_linear_inputs(input, weight, bias);
  const Activation act = parse_activation(std::string(activation));
  kLinearCpuVariants.select(variant, 0, "reference");
  const at::Tensor out = matmul_nt_cpu(flatten_to_rows(input), weight, bias, act);
  return out.view(linear_output_sizes(input, weight.size(0)));
}

}  // namespace

TORCH_LIBRARY_IMPL(memopt, CPU, m) {
  m.impl("gemm", &gemm_cpu);
  m.impl("linear", &linear_cpu);
}

}  // namespace memopt
