// normalize(): the per-element epilogue shared by the LayerNorm / RMSNorm rungs after
// naive (kernels v02-v04); their reductions are common/block_reduce.cuh.
#pragma once

#include <cstdint>

#include "common/block_reduce.cuh"

namespace memopt {

// y = (x - mean) * inv_std * w + b in fp32, w = 1 and b = 0 where not given;
// kRms: x * inv_std * w (mean 0, no bias). The parameters already loaded.
// Every rounding is spelled out (__fmul_rn, __fmaf_rn) so that nvcc cannot
// contract the weight-bias multiply-add one way in one kernel and another way
// in the next: left to it, the register-parameter path and the late read
// differed in the last bit for layer_norm 60 x 8192 on the H200 (aa62d52),
// and the tests compare those bits. The absent parameters' 1 and 0 change no
// bit but a zero's sign. One form for each op, with no branch on which
// parameters there are: ptxas (sm_90a) gave the late 16-bit layer_norm
// kernels at the 64-register cap 12-20 bytes of spills with a branch a case
// (or on the bias alone), 0 this way; RMSNorm's multiply-add with b = 0 took
// two of its 64-thread late kernels to 4.
template <bool kRms = false>
__device__ __forceinline__ float normalize_by(float x, float mean, float inv_std, float w,
                                              float b) {
  if constexpr (kRms) return __fmul_rn(__fmul_rn(x, inv_std), w);
  return __fmaf_rn(__fmul_rn(x - mean, inv_std), w, b);
}

// The same with weight[i] and bias[i], weight and bias optional.
template <bool kRms = false, typename param_t>
__device__ __forceinline__ float normalize(float x, float mean, float inv_std,
                                           const param_t* __restrict__ weight,
                                           const param_t* __restrict__ bias, int64_t i) {
  return normalize_by<kRms>(x, mean, inv_std,
                            weight != nullptr ? static_cast<float>(weight[i]) : 1.f,
                            bias != nullptr ? static_cast<float>(bias[i]) : 0.f);
}

}  // namespace memopt
