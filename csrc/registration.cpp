// Every memopt schema, defined once. Backends add kernels with
// TORCH_LIBRARY_IMPL(memopt, CPU|CUDA, m) in their own files; the fake (meta)
// kernels and the inference-only autograd guard live in torch_memopt/ops.py.
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
}
