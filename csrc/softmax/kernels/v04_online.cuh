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
// kPackBytes = sizeof(in_t): one element a pack (OnlineSlice), for widths
// off the 16-byte pack (softmax_narrow.cu).
// kThreads of 4, 8 or 16: several rows a warp, for attention rows (128-512
// columns). At 32 threads a row a 128-wide bf16 row kept 4 lanes of 32 busy
// (16 packs, 4 a thread): 1048576 x 128 read 17% of copy, 0.18x
// torch.compile. Those kernels are capped at 64 registers (8 blocks, 32 warps
// an SM), as many rows in flight as the 32-thread kernel at 1024 columns.
//
// kPeel: rows of any width and start, 16-byte packs in the middle. Each row's
// first elements up to a 16-byte boundary of x (the head, < kVec) and its last
// ones past the whole packs (the tail, < kVec) are single elements, folded
// into the thread's (max, sum) one at a time and written after the packs;
// the row of y starts at the same offset in its packs (the launcher checks).
// For N = 32001 or 50257, whose rows start at every offset of a pack: the
// one-element packs read 2048 x 32001 bf16 at 35% of copy.
template <typename in_t, typename out_t, int kThreads, int kVecs, bool kRaw = false,
          int kPackBytes = 16, bool kPeel = false>
__global__ void __launch_bounds__(kThreads < kSoftmaxMinBlock ? kSoftmaxMinBlock : kThreads,
                                  kRaw ? kMinBlocksAt64Registers<kThreads>
                                  : kThreads < 32 ? kMinBlocksAt64Registers<kSoftmaxMinBlock>
                                                  : 1)
    softmax_online_kernel(const in_t* __restrict__ x, out_t* __restrict__ y, int64_t rows,
                          int64_t dim_size, int64_t in_stride) {
  constexpr int kVec = kPackBytes / sizeof(in_t);
  constexpr int kBlock = kThreads < kSoftmaxMinBlock ? kSoftmaxMinBlock : kThreads;
  constexpr int kRowsPerBlock = kBlock / kThreads;
  constexpr int kWarpsPerRow = kThreads / 32;
  using InPack = Pack<in_t, kVec>;
  using OutPack = Pack<out_t, kVec>;
  __shared__ float scratch_m[kBlock / 32], scratch_s[kBlock / 32];

  const int t = threadIdx.x % kThreads;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kThreads;
  const bool active = row < rows;  // rows past the end still take part in the barriers
  // Input rows in_stride apart (a multiple of the pack unless kPeel), out
  // contiguous.
  const in_t* const xrow = x + row * in_stride;
  out_t* const yrow = y + row * dim_size;
  int64_t head = 0, packs = 0, tail = 0;
  if (active) {
    if constexpr (kPeel) {
      const auto misaligned = static_cast<int64_t>(reinterpret_cast<uintptr_t>(xrow) % 16);
      head = min(dim_size, (16 - misaligned) % 16 / static_cast<int64_t>(sizeof(in_t)));
    }
    packs = (dim_size - head) / kVec;
    tail = dim_size - head - packs * kVec;
  }
  const InPack* xr = reinterpret_cast<const InPack*>(xrow + head);
  OutPack* yr = reinterpret_cast<OutPack*>(yrow + head);
  // The i-th of the row's head + tail single elements.
  const auto edge = [&](int64_t i) { return i < head ? i : head + packs * kVec + (i - head); };

  // Whole-pack loads but in the peeled rows: with them their kernels' spills
  // went 504 -> 944 bytes over softmax_peeled.cu (ptxas; OnlineSlice's
  // kWholeLoads).
  OnlineSlice<in_t, out_t, kVecs, kThreads, kRaw, kPackBytes, !kPeel> slice;
  float m, s;
  slice.reduce(xr, 0, packs, t, m, s);
  if constexpr (kPeel) {
    // A single element is the pair (x, e^(x - x) = 1).
    for (int64_t i = t; i < head + tail; i += kThreads) {
      merge_online(m, s, static_cast<float>(xrow[edge(i)]), 1.f);
    }
  }
  // Across the row's threads: lanes by shuffles (within each group of kThreads
  // lanes when a warp holds several rows), warps through shared memory.
  merge_online_over_lanes<(kThreads < 32 ? kThreads : 32)>(m, s);
  if constexpr (kWarpsPerRow > 1) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) scratch_m[warp] = m, scratch_s[warp] = s;
    __syncthreads();
    // The row's warps' pairs over lanes (lane l holds warp l % kWarpsPerRow's),
    // merged by a butterfly within each group of kWarpsPerRow lanes: log2 of
    // the warps merges deep (5 at 1024 threads) where one lane's loop over
    // them was kWarpsPerRow - 1 (31), each a max and two e^x in turn.
    const int first = warp / kWarpsPerRow * kWarpsPerRow;
    m = scratch_m[first + lane % kWarpsPerRow];
    s = scratch_s[first + lane % kWarpsPerRow];
    merge_online_over_lanes<kWarpsPerRow>(m, s);
    // Lanes may differ in the sum's last bit; lane 0's pair, which every warp
    // computes alike, is the row's.
    m = __shfl_sync(0xffffffffu, m, 0);
    s = __shfl_sync(0xffffffffu, s, 0);
  }
  slice.write(xr, yr, 0, packs, t, m, s);
  if constexpr (kPeel) {
    // As slice.write: NaN for a row of -inf only, as torch.softmax.
    const float inv_sum = 1.f / s;
    for (int64_t i = t; i < head + tail; i += kThreads) {
      const float v = static_cast<float>(xrow[edge(i)]);
      yrow[edge(i)] = static_cast<out_t>(m == -INFINITY ? NAN : ExpShiftExact{m}(v) * inv_sum);
    }
  }
}

}  // namespace memopt
