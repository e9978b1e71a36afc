// Input validation for every memopt op: one check_<op>_inputs() per op, called
// by the CPU and the CUDA implementation alike before anything is allocated or
// launched. Each failure names the op, the argument, what was expected and what
// came, e.g. "memopt::gemm: expected b to have dtype float32 (the dtype of a), got bfloat16".
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/SymIntArrayRef.h>
#include <c10/util/ArrayRef.h>

#include <optional>

namespace memopt {

// a [M, K], b [K, N].
void check_gemm_inputs(const at::Tensor& a, const at::Tensor& b);

// input [..., K], weight [N, K], bias [N] or none; activation is parsed separately.
void check_linear_inputs(const at::Tensor& input, const at::Tensor& weight,
                         const std::optional<at::Tensor>& bias);

// input [..., *normalized_shape]; weight/bias shaped like normalized_shape, of
// the input's dtype or float32. Returns the normalized row length (the product
// of normalized_shape). `op` is "layer_norm" or "rms_norm".
int64_t check_norm_inputs(const char* op, const at::Tensor& input,
                          c10::SymIntArrayRef normalized_shape,
                          const std::optional<at::Tensor>& weight,
                          const std::optional<at::Tensor>& bias);

// check_norm_inputs plus the residual of the fused add + norm ops: the
// input's shape, dtype and device. `op` is "add_layer_norm" or "add_rms_norm".
int64_t check_add_norm_inputs(const char* op, const at::Tensor& input, const at::Tensor& residual,
                              c10::SymIntArrayRef normalized_shape,
                              const std::optional<at::Tensor>& weight,
                              const std::optional<at::Tensor>& bias);

// Returns `dim` wrapped into [0, max(input.dim(), 1)).
int64_t check_softmax_inputs(const at::Tensor& input, int64_t dim,
                             std::optional<c10::ScalarType> dtype);

}  // namespace memopt
