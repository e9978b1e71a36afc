#include "softmax/softmax_common.h"

#include <ATen/ops/empty.h>

namespace memopt {

SoftmaxRows prepare_softmax_rows(const at::Tensor& input, int64_t dim,
                                 std::optional<c10::ScalarType> dtype) {
  SoftmaxRows rows;
  const c10::ScalarType out_dtype = dtype.value_or(input.scalar_type());
  rows.widen_to_fp32 = out_dtype == at::kFloat && input.scalar_type() != at::kFloat;
  const bool cast_first = out_dtype != input.scalar_type() && !rows.widen_to_fp32;
  rows.input = (cast_first ? input.to(out_dtype) : input).contiguous();
  rows.out = at::empty(input.sizes(), input.options().dtype(out_dtype).memory_format(
                                          c10::MemoryFormat::Contiguous));
  if (input.dim() > 0) {
    for (int64_t d = 0; d < dim; ++d) rows.outer *= input.size(d);
    rows.dim_size = input.size(dim);
    for (int64_t d = dim + 1; d < input.dim(); ++d) rows.inner *= input.size(d);
  }
  return rows;
}

}  // namespace memopt
