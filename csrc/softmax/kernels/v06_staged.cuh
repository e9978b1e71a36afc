// Rung 6 of the softmax ladder: staged (softmax over the last dim, rows that
// fit twice in one block's shared memory, up to ~58K 16-bit or ~29K fp32
// columns on Hopper's 227 KB, or in a cluster's: below).
//
// What changed from online: the row waits in shared memory instead of
// registers, and the block is persistent with two row buffers. While the
// block reduces and writes row r from one buffer, cp.async is already
// copying the block's next row into the other. online at 50257 bf16 columns
// holds a row in 1024 threads x 8 packs of registers, one block an SM, and
// nothing is in flight while that block reduces and writes: 512 x 50257 bf16
// read and wrote at 62% of copy, 2048 x 50257 at 79% (H100, 2026-12-06).
// Here the next row's 100 KB is already on its way during those phases.
// Measured there: 66% / 84%, 0.93x online's time; at 32000-32001 columns,
// where online runs two 512-thread blocks an SM, 13-23% slower than online,
// so auto takes staged past 32768 16-bit columns only (softmax_cuda.cu).
// A block's own work (two exponentials and ~11 instructions an element) is
// ~40% of a row's memory time, all between its barriers (docs/perf-notes.md).
//
// - Any width and any row start: a row's elements sit in its buffer at the
//   offset they have in their 16-byte chunk of global memory (`lead`), so the
//   chunks that lie wholly inside the row go by cp.async (16 bytes, aligned
//   both ends) and the at most 2 x 7 elements at its ends by plain loads into
//   registers, stored into the buffer just before it is read. Nothing
//   outside the row is read (compute-sanitizer counts cp.async's 16 bytes).
// - Three passes over shared memory, one over global memory each way: each
//   thread's max over its 16-byte chunks, its sum of e^(x - max), one merge of
//   (max, sum) pairs for the block (lanes by shuffles, warps by warp 0), then
//   y = e^(x - m) / s in 16-byte stores where y's rows line up with x's in
//   their packs (contiguous rows do), one element a store otherwise. Two
//   exponentials an element, as online's 16-bit rows kept as loaded.
// - Three block barriers a row: the buffer complete, the warps' pairs, the
//   row's pair (kCluster > 1: a cluster barrier instead). The buffer a copy
//   refills was last read before the first of them, so no fourth barrier
//   guards it.
//
// kCluster = 2: rows whose two buffers do not fit one block (16-bit rows of
// ~58K-116K columns, fp32 of ~29K-58K: fp32 vocabularies of 32000-50257) are
// split over the two CTAs of a thread-block cluster, each holding its slice
// of the row's chunks twice. A CTA reduces its slice to a (max, sum) pair,
// publishes it in its shared memory, and after one cluster barrier every CTA
// merges both pairs through distributed shared memory in rank order
// (deterministic, the same pair in every CTA).
// The pairs sit in two slots taken by row parity, so one barrier a row
// suffices: a slot is written again two rows later, after the barrier of the
// row between, which no CTA passes before it has read the slot. Online keeps
// the first 64K 16-bit elements of such a row in registers and re-reads the
// rest; cluster holds a slice in registers, one row per cluster at a time,
// nothing in flight while it reduces. Here the row is read once and the next
// row's slice is on its way during the reductions.
//
// Measured (H100, 2048 rows; docs/perf-notes.md, 2026-12-06 evening): over 1
// / 2 / 4 / 8 CTAs a row of 50257 bf16 (slices of 100 / 50 / 25 / 12.5 KB)
// took a CTA 10.6 / 7.6 / 6.1 / 6.0 us, 1.8 / 3.2 / 3.9 / 4.9 us past its
// bytes' time at its share of copy: 83% / 58% / 36% / 18% of copy. A ring of
// up to 8 buffers (the next rows' copies further ahead) did not lower the
// excess (2-4 points slower at 2 and 4 CTAs): not the load's latency, but
// what grows with the CTAs meeting at the row's barrier. So only slices of
// ~100 KB carry it: the launcher stops at 2 CTAs, which fp32 rows of
// 32769-57000 columns take (2048 x 50257 fp32 at 84% against the peeled
// online's 74%).
//
// NaN, +-inf, all -inf rows (NaN) and finfo.min-masked rows as online
// (merge_online, ExpShiftExact for a maximum beyond kExpShiftFmaLimit).
#pragma once

#include <cooperative_groups.h>

#include <cstdint>

#include "common/cp_async.cuh"
#include "common/fast_exp.cuh"
#include "common/nan_max.h"
#include "common/pack.cuh"
#include "softmax/kernels/online_slice.cuh"  // merge_online(_over_block)

namespace memopt {

constexpr int kSoftmaxStagedThreads = 1024;

// The elements a buffer of a row of dim_size holds: the row plus up to a
// chunk's lead, rounded to whole 16-byte chunks; kCluster > 1, one CTA's
// share of those chunks.
template <typename in_t>
__host__ __device__ constexpr int64_t staged_buffer_elems(int64_t dim_size, int cluster = 1) {
  constexpr int64_t kVec = 16 / sizeof(in_t);
  const int64_t chunks = (dim_size + 2 * kVec - 1) / kVec;
  return (chunks + cluster - 1) / cluster * kVec;
}

// Where one row lies in its buffer chunks and in global memory: element i of
// the row is chunk element lead + i; [head, head + chunks * kVec) are whole
// aligned chunks of the row. This CTA holds chunks [q0, q1) of the row, chunk
// q at buf + (q - q0) * kVec (all of them without a cluster).
struct StagedRow {
  int lead, head, chunks, tail, q0, q1;
};

template <int kVec, int kCluster, typename T>
__device__ __forceinline__ StagedRow staged_row(const T* row, int64_t dim_size, int rank) {
  StagedRow r;
  r.lead = static_cast<int>(reinterpret_cast<uintptr_t>(row) % 16 / sizeof(T));
  r.head = static_cast<int>(min(dim_size, static_cast<int64_t>((kVec - r.lead) % kVec)));
  r.chunks = static_cast<int>((dim_size - r.head) / kVec);
  r.tail = static_cast<int>(dim_size - r.head - static_cast<int64_t>(r.chunks) * kVec);
  const int all = static_cast<int>((r.lead + dim_size + kVec - 1) / kVec);
  const int share = (all + kCluster - 1) / kCluster;
  // Without a cluster q0 is the constant 0, so the chunk loops compile as
  // before the clusters (min(all, 0) would not fold).
  r.q0 = kCluster == 1 ? 0 : min(all, rank * share);
  r.q1 = kCluster == 1 ? all : min(all, r.q0 + share);
  return r;
}

// The copy of this CTA's whole chunks of a row into `buf` by cp.async (landed
// at cp_async_wait_all).
template <int kVec, int kThreads, typename in_t>
__device__ __forceinline__ void stage_chunks(const in_t* xrow, const StagedRow& r, in_t* buf, int t) {
  // The row's whole chunks are chunks [first, first + chunks): lead + head is
  // 0 or kVec.
  const int first = (r.lead + r.head) / kVec;
  const int begin = max(r.q0, first), end = min(r.q1, first + r.chunks);
  for (int q = begin + t; q < end; q += kThreads) {
    cp_async_16_to_shared(buf + (q - r.q0) * kVec, xrow + (q * kVec - r.lead));
  }
}

// This CTA's share of a row's <= 2 (kVec - 1) end elements: thread t < head
// + tail loads row element `edge_at` into `edge`, which the kernel stores at
// buffer element `edge_slot` before the barrier that opens the buffer; -1
// where this thread holds none.
template <int kVec, typename in_t>
__device__ __forceinline__ void load_edge(const in_t* xrow, const StagedRow& r, int t, in_t& edge,
                                          int& edge_at, int& edge_slot) {
  edge_at = -1;
  if (t < r.head + r.tail) {
    const int e = t < r.head ? t : r.head + r.chunks * kVec + (t - r.head);
    const int q = (r.lead + e) / kVec;
    if (q >= r.q0 && q < r.q1) {
      edge_at = e;
      edge_slot = r.lead + e - r.q0 * kVec;
      edge = xrow[e];
    }
  }
}

// Every thread of the cluster arrives, then waits for all: what each CTA
// wrote to its shared memory before is visible to the others after (release /
// acquire at cluster scope, barrier.cluster's defaults). Not
// cooperative_groups' cluster.sync(), which v05_cluster.cuh uses: it compiles
// to an aligned and a non-aligned barrier path both (sm_90a SASS of the
// 2-CTA bf16 kernel: 4 UCGABAR_ARV / _WAIT pairs and 6 BAR.SYNC against 2 and 4
// with .aligned here, 2280 instructions against 2184).
__device__ __forceinline__ void staged_cluster_sync() {
  asm volatile("barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;\n" ::: "memory");
}

template <typename in_t, typename out_t, int kCluster = 1, int kThreads = kSoftmaxStagedThreads>
__global__ void __launch_bounds__(kThreads)
    softmax_staged_kernel(const in_t* __restrict__ x, out_t* __restrict__ y, int64_t rows,
                          int64_t dim_size, int64_t in_stride, int64_t buffer_elems) {
  static_assert(kCluster == 1 || kCluster == 2,
                "1 or 2 CTAs a row (4 and 8 measured slower than online and cluster: above)");
  constexpr int kVec = 16 / sizeof(in_t);
  constexpr int kOutVec = 16 / sizeof(out_t);  // kVec or kVec / 2 (16-bit in, fp32 out)
  constexpr int kWarps = kThreads / 32;
  using InPack = Pack<in_t, kVec>;
  using OutPack = Pack<out_t, kOutVec>;
  extern __shared__ __align__(16) unsigned char staged_smem[];
  // row_pair: the block's (max, sum) of the row, two slots by row parity
  // (kCluster > 1: this CTA's, read by its peers).
  __shared__ float warp_m[kWarps], warp_s[kWarps], row_pair[2][2];
  in_t* const buffers = reinterpret_cast<in_t*>(staged_smem);
  const int t = threadIdx.x;
  // The CTAs of a cluster are consecutive along x and take the same rows.
  const int rank = static_cast<int>(blockIdx.x % kCluster);
  const int64_t step = gridDim.x / kCluster;

  int64_t row = blockIdx.x / kCluster;
  if (row >= rows) return;  // the whole cluster: no barrier is left waiting
  const auto geometry = [&](int64_t r) {
    return staged_row<kVec, kCluster>(x + r * in_stride, dim_size, rank);
  };
  StagedRow cur = geometry(row);
  in_t edge{};
  int edge_at = -1, edge_slot = 0;
  stage_chunks<kVec, kThreads>(x + row * in_stride, cur, buffers, t);
  load_edge<kVec>(x + row * in_stride, cur, t, edge, edge_at, edge_slot);

  for (int buf = 0; row < rows; row += step, buf ^= 1) {
    in_t* const b = buffers + buf * buffer_elems;
    // The row's own end elements, then every thread's copies: all visible
    // after the barrier.
    if (edge_at >= 0) b[edge_slot] = edge;
    cp_async_wait_all();
    __syncthreads();

    // The next row into the other buffer, read last before the barrier above.
    const int64_t next = row + step;
    StagedRow nxt{};
    if (next < rows) {
      nxt = geometry(next);
      stage_chunks<kVec, kThreads>(x + next * in_stride, nxt, buffers + (buf ^ 1) * buffer_elems, t);
      load_edge<kVec>(x + next * in_stride, nxt, t, edge, edge_at, edge_slot);
    } else {
      edge_at = -1;
    }

    // Chunk q of the row covers chunk elements [q * kVec, + kVec), at
    // b + (q - q0) * kVec; its elements p in [lead, lead + dim_size) are the
    // row's.
    const int end = cur.lead + static_cast<int>(dim_size);
    const auto whole = [&](int q) { return q * kVec >= cur.lead && (q + 1) * kVec <= end; };
    const auto at = [&](int q) { return b + (q - cur.q0) * kVec; };
    const auto chunk = [&](int q, float (&v)[kVec]) {
      const InPack pk = *reinterpret_cast<const InPack*>(at(q));
      const bool all = whole(q);
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        const int p = q * kVec + j;
        v[j] = all || (p >= cur.lead && p < end) ? static_cast<float>(pk.v[j]) : -INFINITY;
      }
    };

    float m = -INFINITY, s = 0.f;
    for (int q = cur.q0 + t; q < cur.q1; q += kThreads) {
      float v[kVec];
      chunk(q, v);
#pragma unroll
      for (int j = 0; j < kVec; ++j) m = nan_propagating_max(m, v[j]);
    }
    if (m != -INFINITY) {
      with_exp_shift(m, [&](auto exp) {
        for (int q = cur.q0 + t; q < cur.q1; q += kThreads) {
          float v[kVec];
          chunk(q, v);
#pragma unroll
          for (int j = 0; j < kVec; ++j) s += exp(v[j]);
        }
      });
    }
    // The block's pair, published by thread 0 (in warp 0, which holds it).
    merge_online_over_block<kWarps>(m, s, warp_m, warp_s);
    if (t == 0) row_pair[buf][0] = m, row_pair[buf][1] = s;
    float row_m, row_s;
    if constexpr (kCluster == 1) {
      __syncthreads();
      row_m = row_pair[buf][0], row_s = row_pair[buf][1];
    } else {
      // Every CTA's pair, merged in rank order.
      staged_cluster_sync();
      const cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
      row_m = -INFINITY, row_s = 0.f;
#pragma unroll
      for (int r = 0; r < kCluster; ++r) {
        const float* peer = cluster.map_shared_rank(&row_pair[buf][0], r);
        merge_online(row_m, row_s, peer[0], peer[1]);
      }
    }
    // A row of -inf only gives NaN, as torch.softmax (e^(-inf - -inf)).
    const float inv_sum = row_m == -INFINITY ? NAN : 1.f / row_s;

    out_t* const yrow = y + row * dim_size;
    // y's packs line up with the buffer's chunks when y's row starts `lead`
    // elements past a 16-byte boundary modulo its pack: every contiguous row
    // (x and y then start at the same element offset).
    const auto y_elems = static_cast<int64_t>(reinterpret_cast<uintptr_t>(yrow) / sizeof(out_t));
    const bool aligned_y = reinterpret_cast<uintptr_t>(yrow) % sizeof(out_t) == 0 &&
                           (y_elems - cur.lead) % kOutVec == 0;
    with_exp_shift(row_m, [&](auto exp) {
      if (aligned_y) {
        for (int q = cur.q0 + t; q < cur.q1; q += kThreads) {
          const InPack pk = *reinterpret_cast<const InPack*>(at(q));
          const int first = q * kVec - cur.lead;  // the row element at the chunk's start
          if (whole(q)) {
#pragma unroll
            for (int h = 0; h < kVec / kOutVec; ++h) {
              OutPack out;
#pragma unroll
              for (int j = 0; j < kOutVec; ++j) {
                const float v = static_cast<float>(pk.v[h * kOutVec + j]);
                out.v[j] = static_cast<out_t>(exp(v) * inv_sum);
              }
              store_pack_global(reinterpret_cast<OutPack*>(yrow + first + h * kOutVec), out);
            }
          } else {
#pragma unroll
            for (int j = 0; j < kVec; ++j) {
              const int i = first + j;
              if (i >= 0 && i < dim_size) {
                yrow[i] = static_cast<out_t>(exp(static_cast<float>(pk.v[j])) * inv_sum);
              }
            }
          }
        }
      } else {
        // This CTA's row elements, one a store.
        const int from = max(0, cur.q0 * kVec - cur.lead);
        const int to = static_cast<int>(min(dim_size, static_cast<int64_t>(cur.q1 * kVec - cur.lead)));
        const int slot = cur.lead - cur.q0 * kVec;  // row element i is b[slot + i]
        for (int i = from + t; i < to; i += kThreads) {
          yrow[i] = static_cast<out_t>(exp(static_cast<float>(b[slot + i])) * inv_sum);
        }
      }
    });
    cur = nxt;
  }
  // No CTA leaves while a peer may still read its last pair.
  if constexpr (kCluster > 1) staged_cluster_sync();
}

}  // namespace memopt
