#include "softmax/softmax_common.h"

#include <ATen/ops/empty.h>

namespace memopt {

SoftmaxRows prepare_softmax_rows(const at::Tensor& input, int64_t dim,
                                 std::optional<c10::ScalarType> dtype) {
  SoftmaxRows rows;
  const c10::ScalarType out_dtype = dtype.value_or(input.scalar_type());
  rows.widen_to_fp32 = out_dtype == at::kFloat && input.scalar_type() != at::kFloat;
  const bool cast_first = out_dtype != input.scalar_type() && !rows.widen_to_fp32;
  const at::Tensor source = cast_first ? input.to(out_dtype) : input;
  rows.out = at::empty(input.sizes(), input.options().dtype(out_dtype).memory_format(
                                          c10::MemoryFormat::Contiguous));
  if (input.dim() > 0) {
    for (int64_t d = 0; d < dim; ++d) rows.outer *= input.size(d);
    rows.dim_size = input.size(dim);
    for (int64_t d = dim + 1; d < input.dim(); ++d) rows.inner *= input.size(d);
  }
  if (rows.inner == 1 && input.dim() > 0 && source.is_contiguous()) {
    // The rows as they lie: the pointer and row stride that reshape's view
    // would give, without making it (reshape and view took 0.9 us each of a
    // call's host time under torch.profiler, H100, host_profile_norm.py).
    rows.input = source;
    rows.in_stride = rows.dim_size;
  } else if (rows.inner == 1 && input.dim() > 0) {
    // reshape copies only when the rows cannot be one evenly strided view.
    at::Tensor flat = source.reshape({rows.outer, rows.dim_size});
    if (rows.dim_size > 1 && flat.stride(1) != 1) flat = flat.contiguous();
    rows.input = flat;
    rows.in_stride = rows.outer > 1 ? flat.stride(0) : rows.dim_size;
  } else {
    rows.input = source.contiguous();
    rows.in_stride = rows.dim_size * rows.inner;
  }
  return rows;
}

}  // namespace memopt
