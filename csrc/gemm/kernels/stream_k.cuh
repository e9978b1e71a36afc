// Stream-K for the persistent wgmma kernel (kernels/wgmma_sm90.cuh,
// gemm_wgmma_kernel<..., kStreamK = true>): the work split and the fix-up of
// the output tiles that two or more CTAs share.
//
// Why: with whole tiles a CTA, the last wave is partial. M = 256, N = 12288
// in 128 x 256 tiles is 96 tiles on 132 SMs (73% busy for the whole kernel);
// in 128 x 64 tiles 384, 2.9 waves. Stream-K instead walks a flat range of
// (tile, k-tile) iterations: the last `sk_units` tiles of the grid's order
// are cut into sk_units x k_tiles iterations and each CTA takes an equal,
// contiguous run of them, so every SM does the same number of k-tiles.
// The first units (a whole number of waves) stay one tile a CTA.
//
// A run starts and ends mid-tile, so a tile may be shared by CTAs b0 < b1 <
// ... < bj: b0 holds its first k-tiles and owns it (adds the others' fp32
// partials and stores the tile), the others publish theirs. A CTA's first
// item is the only one that can start mid-tile, and its last the only one
// that can end mid-tile, so each CTA publishes at most one partial (from
// its first item, right at the start) and waits at most once (on its last
// item, after all else): no CTA waits before publishing, so there is no
// cycle. It does need every contributor to get an SM: the grid is at most
// one CTA an SM and the kernel holds one SM each, so all are resident on an
// idle GPU.
//
// Determinism: the owner adds the partials in CTA order onto its own
// accumulators, so the sums are the same every run on the same grid.
//
// Workspace (gemm_cuda.cu allocates it and zeroes the flags; sizes:
// gemm_plan.h's stream_k_workspace): a flag a
// (CTA, consumer), zeroed before each launch, and a partial tile a (CTA,
// consumer) in wgmma's fragment order, float4 [kAcc / 4][128 threads]: a
// thread writes and the owner's same thread reads the same 16 bytes, a warp
// 512 contiguous bytes an instruction. 128 x 256 tiles: 128 KB a CTA, 17 MB
// for 132 CTAs, mostly L2-resident.
#pragma once

#include <cstdint>

#include "gemm/kernels/wgmma_ptx.cuh"

namespace memopt {
namespace stream_k {

// The first iteration of CTA `cta` of `ctas` over `iters`: equal runs, the
// remainder spread one each.
__device__ __forceinline__ int64_t run_start(int64_t cta, int64_t iters, int64_t ctas) {
  return cta * iters / ctas;
}

// Calls fn(unit, kt_begin, kt_end) for this CTA's work in order: whole units
// first_unit, first_unit + unit_step, ... below num_units - sk_units, then
// its run of the stream-K iterations over the last sk_units units. The
// producer and the consumers walk the same sequence.
template <typename Fn>
__device__ __forceinline__ void for_each_item(int64_t first_unit, int64_t unit_step,
                                              int64_t num_units, int64_t sk_units, int k_tiles,
                                              const Fn& fn) {
  const int64_t dp_units = num_units - sk_units;
  for (int64_t unit = first_unit; unit < dp_units; unit += unit_step) fn(unit, 0, k_tiles);
  if (sk_units == 0) return;
  const int64_t iters = sk_units * k_tiles;
  int64_t it = run_start(blockIdx.x, iters, gridDim.x);
  const int64_t end = run_start(blockIdx.x + 1, iters, gridDim.x);
  while (it < end) {
    const int64_t unit = it / k_tiles;
    const int kt_begin = static_cast<int>(it % k_tiles);
    const int kt_end = static_cast<int>(min(static_cast<int64_t>(k_tiles), kt_begin + (end - it)));
    fn(dp_units + unit, kt_begin, kt_end);
    it += kt_end - kt_begin;
  }
}

struct Workspace {
  int* flags;       // [grid][consumers], 0 at launch
  float* partials;  // [grid][consumers][kAcc / 4][128] float4
};

__device__ __forceinline__ void store_release(int* flag, int value) {
  asm volatile("st.release.gpu.global.b32 [%0], %1;" ::"l"(flag), "r"(value) : "memory");
}

__device__ __forceinline__ int load_acquire(const int* flag) {
  int value;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(value) : "l"(flag) : "memory");
  return value;
}

// A contributor's consumer: its accumulators into its slot, then the flag.
// Every thread's stores are fenced before the barrier, after which one
// thread releases the flag (the owner acquires it).
template <int kAcc>
__device__ __forceinline__ void publish(const Workspace& ws, const float (&acc)[kAcc], int64_t slot,
                                        int t, int barrier_id) {
  float4* dst = reinterpret_cast<float4*>(ws.partials) + slot * (kAcc / 4) * 128 + t;
#pragma unroll
  for (int j = 0; j < kAcc / 4; ++j) {
    __stcg(dst + j * 128, make_float4(acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]));
  }
  __threadfence();
  sm90::named_barrier_sync(barrier_id, 128);
  if (t == 0) store_release(ws.flags + slot, 1);
}

// The owner's consumer: adds the partials of CTAs cta + 1, cta + 2, ... whose
// runs start before `unit_end_iter` (the iteration after the tile's last),
// in that order, each once its flag is set. Reads go to L2 (__ldcg): the
// lines were written by other SMs.
template <int kAcc, int kConsumers>
__device__ __forceinline__ void add_partials(const Workspace& ws, float (&acc)[kAcc], int64_t cta,
                                             int64_t unit_end_iter, int64_t iters, int64_t ctas,
                                             int consumer, int t, int barrier_id) {
  for (int64_t c = cta + 1; c < ctas && run_start(c, iters, ctas) < unit_end_iter; ++c) {
    // A CTA with an empty run (fewer iterations than CTAs) publishes nothing.
    if (run_start(c + 1, iters, ctas) == run_start(c, iters, ctas)) continue;
    const int64_t slot = c * kConsumers + consumer;
    if (t == 0) {
      while (load_acquire(ws.flags + slot) == 0) __nanosleep(64);
    }
    sm90::named_barrier_sync(barrier_id, 128);
    const float4* src = reinterpret_cast<const float4*>(ws.partials) + slot * (kAcc / 4) * 128 + t;
#pragma unroll
    for (int j = 0; j < kAcc / 4; ++j) {
      const float4 v = __ldcg(src + j * 128);
      acc[4 * j] += v.x, acc[4 * j + 1] += v.y, acc[4 * j + 2] += v.z, acc[4 * j + 3] += v.w;
    }
  }
}

}  // namespace stream_k
}  // namespace memopt
