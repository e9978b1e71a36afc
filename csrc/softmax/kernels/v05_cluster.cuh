// Rung 5 of the softmax ladder: cluster (softmax over the last dim, rows of
// 32K-256K columns; Hopper thread-block clusters, sm_90).
//
// What changed from online: one row is split across the kCluster CTAs of a
// thread-block cluster instead of one block, so a 262144-wide row (512 KB of
// bf16, 1 MB of fp32) sits in the registers of 8 x 1024 threads (32 elements
// a thread, as online) and is read once and written once; online keeps at
// most 32768 elements of a row in registers and re-reads the rest. CTAs of
// 512 threads take rows up to 131072 wide (two CTAs an SM by registers, so
// one row's write overlaps the next row's loads). Each CTA
// reduces its slice to an online (max, sum) pair; the pairs meet through
// distributed shared memory: every CTA reads all kCluster pairs from its
// peers' shared memory (mapa / ld.shared::cluster through cooperative_groups)
// after a cluster barrier, merges them in rank order (deterministic), and
// writes its slice. Like online, each element is exponentiated once.
//
// Requires dim_size % (16 / sizeof(in_t)) == 0, 16-byte aligned rows of x and
// aligned rows of y; the launcher takes online's fallbacks otherwise.
//
// Measured (the norms suite, H200, benchmarks/results/norms_h200.json):
// 1024x131072 / 1024x262144 fp32 72.6% / 66.8% of copy (online 57.2% / 58.8%);
// bf16 47.2% / 38.7%, below online's 58.5%, so auto keeps 16-bit rows on online
// unless enough of them fill every SM held as loaded (kRaw, above).
#pragma once

#include <cooperative_groups.h>

#include "common/register_cap.cuh"
#include "softmax/kernels/online_slice.cuh"
#include "softmax/kernels/v04_online.cuh"  // kSoftmaxThreadElems

namespace memopt {

constexpr int kSoftmaxCluster = 8;  // CTAs a row: the portable cluster size

// grid (kSoftmaxCluster, row slots), cluster (kSoftmaxCluster, 1, 1): the
// cluster at blockIdx.y takes rows blockIdx.y, + gridDim.y, ...
// Capped at 64 registers: the 512-thread kernels took 79-90 once the online
// tail lost its expf calls (2026-11-30), one CTA an SM instead of two, and
// fp32 1024 x 131072 fell from 72.8% to 60.0% of copy.
// kPackBytes = sizeof(in_t): one element a pack, 32 a thread (softmax_narrow.cu).
// kCluster, kVecs, kRaw (softmax_launch.cuh's launch_cluster_held): 16-bit
// rows past online's 65536 registers split over 4-8 CTAs of 512 threads (two
// an SM) or 8 of 1024, each holding its slice as loaded, 8 packs (64
// elements) a thread: 128256 / 256000 bf16 at 83-90% of copy (H100).
template <typename in_t, typename out_t, int kThreads, int kPackBytes = 16,
          int kCluster = kSoftmaxCluster,
          int kVecs = kSoftmaxThreadElems / (kPackBytes / static_cast<int>(sizeof(in_t))),
          bool kRaw = false>
__global__ void __launch_bounds__(kThreads, kMinBlocksAt64Registers<kThreads>)
    softmax_cluster_kernel(const in_t* __restrict__ x, out_t* __restrict__ y, int64_t rows,
                           int64_t dim_size, int64_t in_stride) {
  namespace cg = cooperative_groups;
  constexpr int kVec = kPackBytes / sizeof(in_t);
  constexpr int kThreadPacks = kVecs;
  constexpr int kWarps = kThreads / 32;
  using InPack = Pack<in_t, kVec>;
  using OutPack = Pack<out_t, kVec>;
  __shared__ float warp_m[kWarps], warp_s[kWarps];
  __shared__ float cta_pair[2];  // this CTA's (max, sum), read by the peers
  const cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  const int t = threadIdx.x;

  const int64_t packs = dim_size / kVec;
  const int64_t per_cta = (packs + kCluster - 1) / kCluster;
  const int64_t first = rank * per_cta;
  const int64_t last = min(packs, first + per_cta);

  for (int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
    const InPack* xr = reinterpret_cast<const InPack*>(x + row * in_stride);
    OutPack* yr = reinterpret_cast<OutPack*>(y + row * dim_size);

    // (plain reads: OnlineSlice's kWholeLoads says why)
    OnlineSlice<in_t, out_t, kThreadPacks, kThreads, kRaw, kPackBytes, false> slice;
    float m, s;
    slice.reduce(xr, first, last, t, m, s);

    // The CTA's pair, published by thread 0 (in warp 0, which holds it).
    merge_online_over_block<kWarps>(m, s, warp_m, warp_s);
    if (t == 0) cta_pair[0] = m, cta_pair[1] = s;
    // Every CTA's pair is written before any is read (release / acquire at
    // cluster scope).
    cluster.sync();
    float row_m = -INFINITY, row_s = 0.f;
    for (int r = 0; r < kCluster; ++r) {
      const float* peer = cluster.map_shared_rank(cta_pair, r);
      merge_online(row_m, row_s, peer[0], peer[1]);
    }
    // No CTA overwrites its pair (next row) or exits while a peer still reads it.
    cluster.sync();

    slice.write(xr, yr, first, last, t, row_m, row_s);
  }
}

}  // namespace memopt
