// Reductions across the threads of a warp, of a group of warps (one row's
// threads, several rows a block) or of a block: the LayerNorm / RMSNorm and
// softmax rungs after naive. Every lane or thread gets the result.
#pragma once

#include <cuda_runtime.h>

#include "common/nan_max.h"

namespace memopt {

struct SumOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};
// NaN-propagating, as torch's reductions are (common/nan_max.h).
struct MaxOp {
  __device__ __forceinline__ float operator()(float a, float b) const {
    return nan_propagating_max(a, b);
  }
};

// Butterfly over the 32 lanes: 5 shuffles, no shared memory.
template <typename Op>
__device__ __forceinline__ float warp_reduce(float v, Op op) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) { return warp_reduce(v, SumOp{}); }

// Over the kWarpsPerGroup consecutive warps of each group (kWarpsPerBlock
// warps a block): warp results through `scratch` (kWarpsPerBlock floats of
// shared memory), read back by every thread of the group. Every thread of
// the block calls it the same number of times; the second barrier keeps the
// next call from overwriting `scratch` while a slow warp still reads it.
template <int kWarpsPerGroup, int kWarpsPerBlock, typename Op>
__device__ __forceinline__ float group_reduce(float v, float* scratch, Op op) {
  v = warp_reduce(v, op);
  if constexpr (kWarpsPerGroup == 1) {
    return v;
  } else {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    const int first = warp / kWarpsPerGroup * kWarpsPerGroup;
    float total = scratch[first];
#pragma unroll
    for (int w = 1; w < kWarpsPerGroup; ++w) total = op(total, scratch[first + w]);
    __syncthreads();
    return total;
  }
}
template <int kWarpsPerGroup, int kWarpsPerBlock>
__device__ __forceinline__ float group_sum(float v, float* scratch) {
  return group_reduce<kWarpsPerGroup, kWarpsPerBlock>(v, scratch, SumOp{});
}
// The whole block as one group.
template <int kWarps>
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  return group_reduce<kWarps, kWarps>(v, scratch, SumOp{});
}

}  // namespace memopt
