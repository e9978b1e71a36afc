// CUDA launchers of memopt::gemm and memopt::linear. Each wrapper follows one
// order: check inputs -> pick the rung -> lay out operands -> allocate ->
// launch on the current stream under a device guard -> check the launch.
// Rungs live one per file in kernels/, numbered in ladder order; rungs 2-8 are
// the fp32 SIMT ladder (launchers in ladder_simple.cu and ladder_tiled.cu).
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <vector>

#include "common/activation.h"
#include "common/checks.h"
#include "common/cuda_launch.cuh"
#include "common/dispatch.h"
#include "common/dtype_names.h"
#include "common/variants.h"
#include "gemm/gemm_common.h"
#include "gemm/kernels/v01_naive.cuh"
#include "gemm/ladder.h"

namespace memopt {
namespace {

using LadderLauncher = void (*)(const GemmArgs&, cudaStream_t);

struct Rung {
  const char* name;
  LadderLauncher launch;  // nullptr for naive, which has its own dtype-generic launcher
  OperandLayout layout;
};

// The ladder in order. Rungs after naive are fp32 only.
constexpr Rung kRungs[] = {
    {"naive", nullptr, OperandLayout::any},
    {"coalesced", launch_gemm_coalesced, OperandLayout::any},
    {"smem_tiled", launch_gemm_smem_tiled, OperandLayout::row_major_a},
    {"smem_padded", launch_gemm_smem_padded, OperandLayout::row_major_a},
    {"double_buffered", launch_gemm_double_buffered, OperandLayout::row_major_a},
    {"register_blocked", launch_gemm_register_blocked, OperandLayout::row_major_a},
    {"vectorized", launch_gemm_vectorized, OperandLayout::row_major_a},
    {"warptiled", launch_gemm_warptiled, OperandLayout::row_major_a},
};

// gemm and linear offer the same rungs, named once in kRungs.
std::vector<Variant> ladder_variants() {
  std::vector<Variant> variants;
  for (const Rung& r : kRungs) variants.push_back({r.name});
  return variants;
}
const VariantTable kGemmCudaVariants("gemm", c10::DeviceType::CUDA, ladder_variants());
const VariantTable kLinearCudaVariants("linear", c10::DeviceType::CUDA, ladder_variants());

const Rung& find_rung(const std::string& name) {
  for (const Rung& r : kRungs) {
    if (name == r.name) return r;
  }
  TORCH_CHECK(false, "memopt::gemm: no launcher for variant '", name, "'");
}

// auto: fp32 takes warptiled, the fastest rung at every size the ladder
// benchmark measured on the H200 (1024^3 17.4 TFLOP/s against 10.5 for the
// next, up to 8192^3 42.7 against 35.4; benchmarks/results/gemm_ladder_h200.json).
// float16/bfloat16 have only the naive rung until the tensor-core kernels land
// (issue 4).
std::string auto_rung(const at::Tensor& a) {
  return a.scalar_type() == at::kFloat ? "warptiled" : "naive";
}

// Rungs after naive read fp32 only: name the ones the dtype can run.
void check_rung_dtype(const char* op, const std::string& rung, const at::Tensor& a) {
  TORCH_CHECK_TYPE(rung == "naive" || a.scalar_type() == at::kFloat, "memopt::", op,
                   ": variant '", rung, "' is a rung of the fp32 ladder and takes float32, got ",
                   dtype_name(a.scalar_type()), "; variants for ", dtype_name(a.scalar_type()),
                   ": auto, naive");
}

// Tiled rungs read A with a unit k-stride and B either row-major (unit
// n-stride) or column-major (unit k-stride, linear's weight): an operand with
// other strides is copied once into that layout.
at::Tensor with_unit_k_stride(const at::Tensor& a) {
  return a.stride(1) == 1 || a.size(1) == 1 ? a : a.contiguous();
}
at::Tensor row_or_col_major(const at::Tensor& b) {
  return b.stride(1) == 1 || b.stride(0) == 1 || b.size(0) == 1 || b.size(1) == 1
             ? b
             : b.contiguous();
}

void launch_naive(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias,
                  at::Tensor& out, Activation act, cudaStream_t stream) {
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  TORCH_CHECK(ceil_div<int64_t>(N, kNaiveBlockCols) <= kMaxGridYZ,
              "memopt: the naive rung supports N up to ", kMaxGridYZ * kNaiveBlockCols,
              " output columns, got N = ", N);
  const dim3 block(kNaiveBlockRows, kNaiveBlockCols);
  const dim3 grid(static_cast<unsigned>(ceil_div<int64_t>(M, kNaiveBlockRows)),
                  static_cast<unsigned>(ceil_div<int64_t>(N, kNaiveBlockCols)));
  MEMOPT_DISPATCH_FLOAT_TYPES(a.scalar_type(), "memopt_gemm_naive", [&] {
    gemm_naive_kernel<scalar_t><<<grid, block, 0, stream>>>(
        a.const_data_ptr<scalar_t>(), a.stride(0), a.stride(1), b.const_data_ptr<scalar_t>(),
        b.stride(0), b.stride(1), bias.defined() ? bias.const_data_ptr<scalar_t>() : nullptr,
        out.mutable_data_ptr<scalar_t>(), M, N, K, act);
  });
}

// out [M, N] = act(a [M, K] @ b [K, N] + bias [N]) with the named rung.
at::Tensor launch_matmul(const std::string& rung_name, const at::Tensor& a_in,
                         const at::Tensor& b_in, const std::optional<at::Tensor>& bias,
                         Activation act) {
  const Rung& rung = find_rung(rung_name);
  const int64_t M = a_in.size(0), N = b_in.size(1);
  const c10::cuda::CUDAGuard device_guard(a_in.device());
  at::Tensor out = at::empty({M, N}, a_in.options());
  if (out.numel() == 0) return out;
  const at::Tensor bias_c =
      bias.has_value() && bias->defined() ? bias->contiguous() : at::Tensor();
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  const int64_t K = a_in.size(1);
  if (rung.launch == nullptr) {
    launch_naive(a_in, b_in, bias_c, out, act, stream);
  } else {
    const bool tiled = rung.layout == OperandLayout::row_major_a;
    TORCH_CHECK(K < (int64_t{1} << 31), "memopt::gemm: the fp32 ladder takes K < 2^31, got K = ", K);
    const at::Tensor a = tiled ? with_unit_k_stride(a_in) : a_in;
    const at::Tensor b = tiled ? row_or_col_major(b_in) : b_in;
    // The stride of a size-1 dim is never used to step, so it is set to 1:
    // a B [1, N] with a non-unit (or zero) n-stride is then read column-major,
    // through its n-stride, rather than as row-major with a unit stride it
    // does not have.
    const int64_t b_stride_k = K == 1 ? 1 : b.stride(0);
    const int64_t b_stride_n = N == 1 ? 1 : b.stride(1);
    TORCH_INTERNAL_ASSERT(!tiled || b_stride_k == 1 || b_stride_n == 1);
    const GemmArgs args{a.const_data_ptr<float>(),
                        a.stride(0),
                        K == 1 ? 1 : a.stride(1),
                        b.const_data_ptr<float>(),
                        b_stride_k,
                        b_stride_n,
                        bias_c.defined() ? bias_c.const_data_ptr<float>() : nullptr,
                        out.mutable_data_ptr<float>(),
                        M,
                        N,
                        K,
                        act};
    // K = 0 (out = act(bias), or zeros): the coalesced rung's k-loop simply runs
    // no times; the tiled rungs assume at least one k-tile to stage.
    (K == 0 ? launch_gemm_coalesced : rung.launch)(args, stream);
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

at::Tensor gemm_cuda(const at::Tensor& a, const at::Tensor& b, c10::string_view variant) {
  check_gemm_inputs(a, b);
  const std::string rung = kGemmCudaVariants.select(variant, capability_of(a), auto_rung(a));
  check_rung_dtype("gemm", rung, a);
  return launch_matmul(rung, a, b, std::nullopt, Activation::none);
}

at::Tensor linear_cuda(const at::Tensor& input, const at::Tensor& weight,
                       const std::optional<at::Tensor>& bias, c10::string_view activation,
                       c10::string_view variant) {
  check_linear_inputs(input, weight, bias);
  const Activation act = parse_activation(std::string(activation));
  const std::string rung =
      kLinearCudaVariants.select(variant, capability_of(input), auto_rung(input));
  check_rung_dtype("linear", rung, input);
  // weight [N, K] read as B [K, N] through swapped strides (column-major B):
  // no transposing copy.
  const at::Tensor out = launch_matmul(rung, flatten_to_rows(input), weight.t(), bias, act);
  return out.view(linear_output_sizes(input, weight.size(0)));
}

}  // namespace

TORCH_LIBRARY_IMPL(memopt, CUDA, m) {
  m.impl("gemm", &gemm_cuda);
  m.impl("linear", &linear_cuda);
}

}  // namespace memopt
