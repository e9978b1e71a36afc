// normalize(): the per-element epilogue shared by the LayerNorm / RMSNorm rungs after
// naive (kernels v02-v04); their reductions are common/block_reduce.cuh.
#pragma once

#include <cstdint>

#include "common/block_reduce.cuh"

namespace memopt {

// y = (x - mean) * inv_std * w + b in fp32, w and b applied where given
// (RMSNorm: mean = 0, no bias): the parameters already loaded.
__device__ __forceinline__ float normalize_by(float x, float mean, float inv_std, bool has_w,
                                              float w, bool has_b, float b) {
  float v = (x - mean) * inv_std;
  if (has_w) v *= w;
  if (has_b) v += b;
  return v;
}

// The same with weight[i] and bias[i], weight and bias optional (the same
// operations in the same order, so the same bits).
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
