// normalize(): the per-element epilogue shared by the LayerNorm / RMSNorm rungs after
// naive (kernels v02-v04); their reductions are common/block_reduce.cuh.
#pragma once

#include <cstdint>

#include "common/block_reduce.cuh"

namespace memopt {

// y = (x - mean) * inv_std * weight + bias, fp32, weight and bias optional
// (RMSNorm: mean = 0, no bias).
template <typename param_t>
__device__ __forceinline__ float normalize(float x, float mean, float inv_std,
                                           const param_t* __restrict__ weight,
                                           const param_t* __restrict__ bias, int64_t i) {
  float v = (x - mean) * inv_std;
  if (weight != nullptr) v *= static_cast<float>(weight[i]);
  if (bias != nullptr) v += static_cast<float>(bias[i]);
  return v;
}

}  // namespace memopt
