// Every memopt schema, defined once. Backends add kernels with
// TORCH_LIBRARY_IMPL(memopt, CPU|CUDA, m) in their own files; the fake (meta)
// kernels live in torch_memopt/ops.py, the inference-only autograd guard in
// inference_only_autograd.cpp.
#include <torch/library.h>

TORCH_LIBRARY(memopt, m) {
  // a [M, K] @ b [K, N] -> [M, N], as torch.mm.
  m.def("gemm(Tensor a, Tensor b, *, str variant=\"auto\") -> Tensor");
  // activation(input [..., K] @ weight[N, K]^T + bias[N]) -> [..., N], as F.linear.
  m.def(
      "linear(Tensor input, Tensor weight, Tensor? bias=None, *, "
      "str activation=\"none\", str variant=\"auto\") -> Tensor");
  m.def(
      "layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, "
      "Tensor? bias=None, float eps=1e-05, *, str variant=\"auto\") -> Tensor");
  m.def(
      "rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, "
      "float? eps=None, *, str variant=\"auto\") -> Tensor");
  m.def("softmax(Tensor input, int dim=-1, ScalarType? dtype=None, *, "
        "str variant=\"auto\") -> Tensor");
  // The residual add of a transformer block fused with the norm after it:
  // sum = input + residual (rounded to the input's dtype), then the norm of
  // sum, in one pass over memory. Returns (normalized, sum).
  m.def(
      "add_rms_norm(Tensor input, Tensor residual, SymInt[] normalized_shape, "
      "Tensor? weight=None, float? eps=None, *, str variant=\"auto\") -> (Tensor, Tensor)");
  m.def(
      "add_layer_norm(Tensor input, Tensor residual, SymInt[] normalized_shape, "
      "Tensor? weight=None, Tensor? bias=None, float eps=1e-05, *, "
      "str variant=\"auto\") -> (Tensor, Tensor)");
}
