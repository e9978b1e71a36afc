// Launch helpers shared by every CUDA launcher: grid arithmetic, the device's
// capability for variant selection, and the post-launch check.
#pragma once

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include "common/variants.h"

namespace memopt {

template <typename T>
constexpr T ceil_div(T a, T b) {
  return (a + b - 1) / b;
}

// Compute capability of the tensor's device as major * 10 + minor.
inline Capability capability_of(const at::Tensor& t) {
  const cudaDeviceProp* prop = at::cuda::getDeviceProperties(t.device().index());
  return prop->major * 10 + prop->minor;
}

// Largest gridDim.y / gridDim.z a launch may use.
constexpr int64_t kMaxGridYZ = 65535;

}  // namespace memopt
