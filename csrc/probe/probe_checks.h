// Argument checks the probe ops share: a float32 CUDA tensor read or written
// densely, and an output paired with its input. Messages name the op and the
// argument, as the memopt ops' do.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>

#include "common/dtype_names.h"

namespace memopt::probe {

inline void check_float_cuda(const char* op, const char* name, const at::Tensor& t) {
  TORCH_CHECK_VALUE(t.defined(), "memopt_probe::", op, ": expected ", name,
                    " to be a tensor, got an undefined tensor");
  TORCH_CHECK_TYPE(t.scalar_type() == at::kFloat, "memopt_probe::", op, ": expected ", name,
                   " to have dtype float32, got ", dtype_name(t.scalar_type()));
  TORCH_CHECK(t.is_cuda(), "memopt_probe::", op, ": expected ", name, " on a CUDA device, got ",
              t.device());
  TORCH_CHECK(t.is_contiguous(), "memopt_probe::", op, ": expected ", name,
              " to be contiguous, got strides ", t.strides());
}

inline void check_same_device(const char* op, const char* name, const at::Tensor& t,
                              const char* ref_name, const at::Tensor& ref) {
  TORCH_CHECK(t.device() == ref.device(), "memopt_probe::", op, ": expected ", name,
              " on the same device as ", ref_name, " (", ref.device(), "), got ", t.device());
}

// An elementwise probe's (input, out): both float32, dense, on one device, same size.
inline void check_input_and_out(const char* op, const at::Tensor& input, const at::Tensor& out) {
  check_float_cuda(op, "input", input);
  check_float_cuda(op, "out", out);
  check_same_device(op, "out", out, "input", input);
  TORCH_CHECK(out.numel() == input.numel(), "memopt_probe::", op, ": expected out to have ",
              input.numel(), " elements (those of input), got ", out.numel());
}

}  // namespace memopt::probe
