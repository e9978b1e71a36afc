// The shape plumbing memopt::gemm and memopt::linear share on every device:
// linear's leading dims flattened into M rows, and the [..., N] output shape.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace memopt {

// input [..., K] viewed (or copied, when no view exists) as [M, K].
inline at::Tensor flatten_to_rows(const at::Tensor& input) {
  // Rows from the leading sizes, not numel / K: K may be 0.
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < input.dim(); ++d) rows *= input.size(d);
  return input.reshape({rows, input.size(-1)});
}

// [..., N]: input's leading dims with the last replaced by N.
inline std::vector<int64_t> linear_output_sizes(const at::Tensor& input, int64_t N) {
  std::vector<int64_t> sizes(input.sizes().begin(), input.sizes().end());
  sizes.back() = N;
  return sizes;
}

}  // namespace memopt
