#include "common/checks.h"

#include "common/dtype_names.h"

#include <c10/util/Exception.h>

#include <sstream>
#include <string>

namespace memopt {
namespace {

bool is_supported_dtype(c10::ScalarType t) {
  return t == c10::ScalarType::Float || t == c10::ScalarType::Half ||
         t == c10::ScalarType::BFloat16;
}

std::string shape_string(c10::IntArrayRef sizes) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < sizes.size(); ++i) os << (i ? ", " : "") << sizes[i];
  os << "]";
  return os.str();
}

void check_defined(const char* op, const char* name, const at::Tensor& t) {
  TORCH_CHECK_VALUE(t.defined(), "memopt::", op, ": expected ", name,
                    " to be a tensor, got an undefined tensor");
}

// float32, float16 or bfloat16, strided (dense) layout, on CPU or CUDA.
void check_float_tensor(const char* op, const char* name, const at::Tensor& t) {
  check_defined(op, name, t);
  TORCH_CHECK_TYPE(is_supported_dtype(t.scalar_type()), "memopt::", op,
                   ": expected ", name,
                   " to have dtype float32, float16 or bfloat16, got ",
                   dtype_name(t.scalar_type()));
  TORCH_CHECK(t.layout() == c10::kStrided, "memopt::", op, ": expected ", name,
              " to be a dense (strided) tensor, got layout ", t.layout());
  TORCH_CHECK(t.is_cpu() || t.is_cuda(), "memopt::", op, ": expected ", name,
              " on a CPU or CUDA device, got ", t.device());
}

void check_same_device(const char* op, const char* name, const at::Tensor& t,
                       const char* ref_name, const at::Tensor& ref) {
  TORCH_CHECK(t.device() == ref.device(), "memopt::", op, ": expected ", name,
              " on the same device as ", ref_name, " (", ref.device(), "), got ",
              t.device());
}

void check_same_dtype(const char* op, const char* name, const at::Tensor& t,
                      const char* ref_name, const at::Tensor& ref) {
  TORCH_CHECK_TYPE(t.scalar_type() == ref.scalar_type(), "memopt::", op,
                   ": expected ", name, " to have dtype ",
                   dtype_name(ref.scalar_type()), " (the dtype of ", ref_name,
                   "), got ", dtype_name(t.scalar_type()));
}

void check_rank(const char* op, const char* name, const at::Tensor& t, int64_t rank,
                const char* layout) {
  TORCH_CHECK(t.dim() == rank, "memopt::", op, ": expected ", name, " to be a ", rank,
              "-D tensor ", layout, ", got a ", t.dim(), "-D tensor of shape ",
              shape_string(t.sizes()));
}

// A norm's weight or bias: shaped like normalized_shape, on the input's device,
// of the input's dtype or float32 (fp32 parameters with a half input are common).
void check_norm_parameter(const char* op, const char* name, const at::Tensor& p,
                          const at::Tensor& input, c10::IntArrayRef normalized_shape) {
  check_float_tensor(op, name, p);
  check_same_device(op, name, p, "input", input);
  const bool input_is_fp32 = input.scalar_type() == c10::ScalarType::Float;
  TORCH_CHECK_TYPE(p.scalar_type() == input.scalar_type() ||
                       p.scalar_type() == c10::ScalarType::Float,
                   "memopt::", op, ": expected ", name, " to have dtype ",
                   dtype_name(input.scalar_type()), " (the dtype of input)",
                   input_is_fp32 ? "" : " or float32", ", got ", dtype_name(p.scalar_type()));
  TORCH_CHECK(p.sizes() == normalized_shape, "memopt::", op, ": expected ", name,
              " of shape ", shape_string(normalized_shape),
              " (normalized_shape), got ", shape_string(p.sizes()));
}

}  // namespace

void check_gemm_inputs(const at::Tensor& a, const at::Tensor& b) {
  check_float_tensor("gemm", "a", a);
  check_float_tensor("gemm", "b", b);
  check_same_device("gemm", "b", b, "a", a);
  check_same_dtype("gemm", "b", b, "a", a);
  check_rank("gemm", "a", a, 2, "[M, K]");
  check_rank("gemm", "b", b, 2, "[K, N]");
  TORCH_CHECK(a.size(1) == b.size(0),
              "memopt::gemm: expected b.size(0) to equal a.size(1) (the inner "
              "dimension K = ", a.size(1), "), got b of shape ", shape_string(b.sizes()),
              " for a of shape ", shape_string(a.sizes()));
}

void check_linear_inputs(const at::Tensor& input, const at::Tensor& weight,
                         const std::optional<at::Tensor>& bias) {
  check_float_tensor("linear", "input", input);
  check_float_tensor("linear", "weight", weight);
  check_same_device("linear", "weight", weight, "input", input);
  check_same_dtype("linear", "weight", weight, "input", input);
  TORCH_CHECK(input.dim() >= 1,
              "memopt::linear: expected input to have at least 1 dimension "
              "[..., K], got a 0-D tensor");
  check_rank("linear", "weight", weight, 2, "[N, K]");
  TORCH_CHECK(weight.size(1) == input.size(-1),
              "memopt::linear: expected weight.size(1) to equal input.size(-1) "
              "(the inner dimension K = ", input.size(-1), "), got weight of shape ",
              shape_string(weight.sizes()), " for input of shape ",
              shape_string(input.sizes()));
  if (bias.has_value() && bias->defined()) {
    const at::Tensor& b = *bias;
    check_float_tensor("linear", "bias", b);
    check_same_device("linear", "bias", b, "input", input);
    check_same_dtype("linear", "bias", b, "input", input);
    TORCH_CHECK(b.dim() == 1 && b.size(0) == weight.size(0),
                "memopt::linear: expected bias of shape [", weight.size(0),
                "] (N = weight.size(0)), got ", shape_string(b.sizes()));
  }
}

int64_t check_norm_inputs(const char* op, const at::Tensor& input,
                          c10::SymIntArrayRef normalized_shape_sym,
                          const std::optional<at::Tensor>& weight,
                          const std::optional<at::Tensor>& bias) {
  check_float_tensor(op, "input", input);
  const c10::IntArrayRef normalized_shape = C10_AS_INTARRAYREF_SLOW(normalized_shape_sym);
  const int64_t norm_dims = static_cast<int64_t>(normalized_shape.size());
  TORCH_CHECK(norm_dims >= 1, "memopt::", op,
              ": expected normalized_shape to have at least one dimension, got []");
  TORCH_CHECK(input.dim() >= norm_dims &&
                  input.sizes().slice(input.dim() - norm_dims) == normalized_shape,
              "memopt::", op, ": expected input of shape [*, ",
              shape_string(normalized_shape).substr(1),
              " (trailing dims equal to normalized_shape), got ",
              shape_string(input.sizes()));
  if (weight.has_value() && weight->defined()) {
    check_norm_parameter(op, "weight", *weight, input, normalized_shape);
  }
  if (bias.has_value() && bias->defined()) {
    check_norm_parameter(op, "bias", *bias, input, normalized_shape);
  }
  int64_t row_length = 1;
  for (int64_t s : normalized_shape) row_length *= s;
  return row_length;
}

int64_t check_add_norm_inputs(const char* op, const at::Tensor& input, const at::Tensor& residual,
                              c10::SymIntArrayRef normalized_shape,
                              const std::optional<at::Tensor>& weight,
                              const std::optional<at::Tensor>& bias) {
  const int64_t row_length = check_norm_inputs(op, input, normalized_shape, weight, bias);
  TORCH_CHECK(residual.sizes() == input.sizes(), "memopt::", op,
              ": expected residual of the input's shape ", shape_string(input.sizes()), ", got ",
              shape_string(residual.sizes()));
  TORCH_CHECK_TYPE(residual.scalar_type() == input.scalar_type(), "memopt::", op,
                   ": expected residual of the input's dtype ", dtype_name(input.scalar_type()),
                   ", got ", dtype_name(residual.scalar_type()));
  TORCH_CHECK(residual.device() == input.device(), "memopt::", op,
              ": expected residual on the input's device ", input.device(), ", got ",
              residual.device());
  return row_length;
}

int64_t check_softmax_inputs(const at::Tensor& input, int64_t dim,
                             std::optional<c10::ScalarType> dtype) {
  check_float_tensor("softmax", "input", input);
  if (dtype.has_value()) {
    TORCH_CHECK_TYPE(is_supported_dtype(*dtype),
                     "memopt::softmax: expected dtype to be float32, float16, "
                     "bfloat16 or None, got ", dtype_name(*dtype));
  }
  // A 0-D tensor behaves as one element along dim 0 or -1, as in torch.softmax.
  const int64_t rank = std::max<int64_t>(input.dim(), 1);
  TORCH_CHECK_INDEX(dim >= -rank && dim < rank, "memopt::softmax: expected dim in [",
                    -rank, ", ", rank - 1, "] for input of shape ",
                    shape_string(input.sizes()), ", got ", dim);
  return dim < 0 ? dim + rank : dim;
}

}  // namespace memopt
