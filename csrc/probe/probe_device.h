// The device a probe op without a tensor argument runs on: the current CUDA
// device. Such ops are registered under CompositeExplicitAutograd (no tensor,
// no device for the dispatcher to pick a kernel by), so they are also reached on
// a machine without a GPU; this check turns that into one clear error naming
// the op instead of a CUDA runtime error from the first call.
#pragma once

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/util/Exception.h>

namespace memopt::probe {

inline c10::DeviceIndex probe_device(const char* op) {
  TORCH_CHECK(at::cuda::is_available(), "memopt_probe::", op,
              ": needs a CUDA GPU, and none is available (torch.cuda.is_available() is False)");
  return c10::cuda::current_device();
}

}  // namespace memopt::probe
