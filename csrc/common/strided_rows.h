// A tensor read as `rows` rows of `row_length` elements, rows `stride`
// elements apart, unit stride within a row: the norms' and softmax's view of
// their input (norm_common.cpp, softmax_common.cpp). ATen host code only.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace memopt {

struct StridedRows {
  at::Tensor data;     // the tensor whose data_ptr the kernels read
  int64_t stride = 0;  // elements between row starts
};

// A contiguous tensor as it lies: the pointer and stride that reshape's view
// would give, without making it (reshape and view took 0.7-0.9 us each of a
// norm's or softmax's host time under torch.profiler, H100,
// benchmarks/tune/host_profile_norm.py). Otherwise reshape, which copies only
// when the rows cannot be one evenly strided view (a row-strided input costs
// no copy), and a copy where the rows' elements are not adjacent.
inline StridedRows strided_rows(const at::Tensor& t, int64_t rows, int64_t row_length) {
  if (t.is_contiguous()) return {t, row_length};
  at::Tensor flat = t.reshape({rows, row_length});
  if (row_length > 1 && flat.stride(1) != 1) flat = flat.contiguous();
  return {flat, rows > 1 ? flat.stride(0) : row_length};
}

}  // namespace memopt
