// Rung 4 of the softmax ladder: online (softmax over the last dim).
//
// What changed from block_smem:
// - One reduction instead of two: each thread keeps a running (max, sum of
//   exponentials relative to that max) pair and the pairs merge across the
//   row's threads in one pass: m = max(m1, m2), s = s1 e^(m1 - m) + s2 e^(m2 - m)
//   (the "online softmax" normalizer), so a row pays one set of barriers, not
//   two.
// - 16-byte loads and stores (8 bf16/fp16 or 4 fp32 elements), the row in
//   registers (kVecs packs a thread: common/pack.cuh's row_vecs) between the
//   reduction and the write: global memory is read once and written once.
// - Threads a row sized to the row (32 ... 1024), several rows a block when a
//   row needs fewer than 128 threads (197-1024 wide).
// Rows wider than 1024 threads x kVecs packs (32768 elements) re-read the
// rest in the write pass, from L2 while the row is still there (the cluster
// rung keeps fp32 rows that wide in registers).
//
// Requires dim_size % (16 / sizeof(in_t)) == 0 and 16-byte aligned rows of x
// and y; the launcher takes block_smem otherwise.
//
// Measured (the norms suite, H200, benchmarks/results/norms_h200.json):
// 16384x4096 93.5% of copy fp32, 85.4% bf16 (58% with two expf an element, 67%
// with one expf); 1024x131072 bf16 58.5% (re-reading from L2).
#pragma once

#include "common/block_reduce.cuh"
#include "common/register_cap.cuh"
#include "softmax/kernels/online_slice.cuh"

namespace memopt {

constexpr int kSoftmaxThreadElems = 32;  // the most row elements a thread keeps in registers
constexpr int kSoftmaxMinBlock = 128;

// kRaw (online_slice.cuh): the 512-thread kernels hold 8 16-bit packs a
// thread as loaded and are capped at 64 registers, two blocks an SM.
template <typename in_t, typename out_t, int kThreads, int kVecs, bool kRaw = false>
__global__ void __launch_bounds__(kThreads < kSoftmaxMinBlock ? kSoftmaxMinBlock : kThreads,
                                  kRaw ? kMinBlocksAt64Registers<kThreads> : 1)
    softmax_online_kernel(const in_t* __restrict__ x, out_t* __restrict__ y, int64_t rows,
                          int64_t dim_size, int64_t in_stride) {
  constexpr int kVec = 16 / sizeof(in_t);
  constexpr int kBlock = kThreads < kSoftmaxMinBlock ? kSoftmaxMinBlock : kThreads;
  constexpr int kRowsPerBlock = kBlock / kThreads;
  constexpr int kWarpsPerRow = kThreads / 32;
  using InPack = Pack<in_t, kVec>;
  using OutPack = Pack<out_t, kVec>;
  __shared__ float scratch_m[kBlock / 32], scratch_s[kBlock / 32];

  const int t = threadIdx.x % kThreads;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kThreads;
  const bool active = row < rows;  // rows past the end still take part in the barriers
  const int64_t packs = active ? dim_size / kVec : 0;
  // Input rows in_stride apart (a multiple of the pack), out contiguous.
  const InPack* xr = reinterpret_cast<const InPack*>(x + row * in_stride);
  OutPack* yr = reinterpret_cast<OutPack*>(y + row * dim_size);

  OnlineSlice<in_t, out_t, kVecs, kThreads, kRaw> slice;
  float m, s;
  slice.reduce(xr, 0, packs, t, m, s);
  // Across the row's threads: lanes by shuffles, warps through shared memory.
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float m2 = __shfl_xor_sync(0xffffffffu, m, offset);
    const float s2 = __shfl_xor_sync(0xffffffffu, s, offset);
    merge_online(m, s, m2, s2);
  }
  if constexpr (kWarpsPerRow > 1) {
    const int warp = threadIdx.x / 32;
    if (threadIdx.x % 32 == 0) scratch_m[warp] = m, scratch_s[warp] = s;
    __syncthreads();
    const int first = warp / kWarpsPerRow * kWarpsPerRow;
    m = scratch_m[first];
    s = scratch_s[first];
#pragma unroll
    for (int w = 1; w < kWarpsPerRow; ++w) merge_online(m, s, scratch_m[first + w], scratch_s[first + w]);
  }
  slice.write(xr, yr, 0, packs, t, m, s);
}

}  // namespace memopt
