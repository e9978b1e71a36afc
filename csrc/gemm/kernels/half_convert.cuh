// bf16 / fp16 <-> fp32 conversions of the tensor-core GEMM kernels (mma_sm80,
// wgmma_sm90, splitk_sm90), spelled out: torch builds with
// __CUDA_NO_HALF_CONVERSIONS__ and __CUDA_NO_BFLOAT16_CONVERSIONS__, so no
// implicit float <-> half exists. Pair is the 4-byte two-element type of the
// epilogues' paired stores.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace memopt {

template <typename T>
struct HalfConvert;

template <>
struct HalfConvert<__nv_bfloat16> {
  using Pair = __nv_bfloat162;
  static __device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
  static __device__ __forceinline__ __nv_bfloat16 round(float v) { return __float2bfloat16_rn(v); }
  static __device__ __forceinline__ Pair round_pair(float a, float b) {
    return __floats2bfloat162_rn(a, b);
  }
};

template <>
struct HalfConvert<__half> {
  using Pair = __half2;
  static __device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
  static __device__ __forceinline__ __half round(float v) { return __float2half_rn(v); }
  static __device__ __forceinline__ Pair round_pair(float a, float b) {
    return __floats2half2_rn(a, b);
  }
};

// float32 (the tf32 wgmma path, whose outputs stay float32): no rounding;
// Pair is 8 bytes.
template <>
struct HalfConvert<float> {
  using Pair = float2;
  static __device__ __forceinline__ float to_float(float v) { return v; }
  static __device__ __forceinline__ float round(float v) { return v; }
  static __device__ __forceinline__ Pair round_pair(float a, float b) { return make_float2(a, b); }
};

}  // namespace memopt
