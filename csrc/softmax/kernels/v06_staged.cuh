// Rung 6 of the softmax ladder: staged (softmax over the last dim, rows that
// fit twice in one block's shared memory: up to ~58K 16-bit or ~29K fp32
// columns on Hopper's 227 KB).
//
// What changed from online: the row waits in shared memory instead of
// registers, and the block is persistent with two row buffers. While the
// block reduces and writes row r from one buffer, cp.async is already
// copying row r + gridDim.x into the other. online at 50257 bf16 columns
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
//   row's pair. The buffer a copy refills was last read before the first of
//   them, so no fourth barrier guards it.
//
// NaN, +-inf, all -inf rows (NaN) and finfo.min-masked rows as online
// (merge_online, ExpShiftExact for a maximum beyond kExpShiftFmaLimit).
#pragma once

#include <cstdint>

#include "common/cp_async.cuh"
#include "common/fast_exp.cuh"
#include "common/nan_max.h"
#include "common/pack.cuh"
#include "softmax/kernels/online_slice.cuh"  // merge_online

namespace memopt {

constexpr int kSoftmaxStagedThreads = 1024;

// The elements a buffer of a row of dim_size holds: the row plus up to a
// chunk's lead, rounded to whole 16-byte chunks.
template <typename in_t>
__host__ __device__ constexpr int64_t staged_buffer_elems(int64_t dim_size) {
  constexpr int64_t kVec = 16 / sizeof(in_t);
  return (dim_size + 2 * kVec - 1) / kVec * kVec;
}

// Where one row lies in its buffer and in global memory: element i of the row
// is buf[lead + i]; [head, head + chunks * kVec) are whole aligned chunks.
struct StagedRow {
  int lead, head, chunks, tail;
};

template <int kVec, typename T>
__device__ __forceinline__ StagedRow staged_row(const T* row, int64_t dim_size) {
  StagedRow r;
  r.lead = static_cast<int>(reinterpret_cast<uintptr_t>(row) % 16 / sizeof(T));
  r.head = static_cast<int>(min(dim_size, static_cast<int64_t>((kVec - r.lead) % kVec)));
  r.chunks = static_cast<int>((dim_size - r.head) / kVec);
  r.tail = static_cast<int>(dim_size - r.head - static_cast<int64_t>(r.chunks) * kVec);
  return r;
}

// The copy of a row into `buf`: its whole chunks by cp.async (landed at
// cp_async_wait_all), its <= 2 (kVec - 1) end elements into `edge` (thread t
// < head + tail holds element `edge_at`), which the kernel stores into the
// buffer before the barrier that opens it.
template <int kVec, int kThreads, typename in_t>
__device__ __forceinline__ void stage_row(const in_t* xrow, const StagedRow& r, in_t* buf, int t,
                                          in_t& edge, int& edge_at) {
  const in_t* src = xrow + r.head;
  in_t* dst = buf + r.lead + r.head;  // a multiple of kVec elements: 16-byte aligned
  for (int c = t; c < r.chunks; c += kThreads) {
    cp_async_16_to_shared(dst + c * kVec, src + c * kVec);
  }
  edge_at = -1;
  if (t < r.head + r.tail) {
    edge_at = t < r.head ? t : r.head + r.chunks * kVec + (t - r.head);
    edge = xrow[edge_at];
  }
}

template <typename in_t, typename out_t, int kThreads = kSoftmaxStagedThreads>
__global__ void __launch_bounds__(kThreads)
    softmax_staged_kernel(const in_t* __restrict__ x, out_t* __restrict__ y, int64_t rows,
                          int64_t dim_size, int64_t in_stride, int64_t buffer_elems) {
  constexpr int kVec = 16 / sizeof(in_t);
  constexpr int kOutVec = 16 / sizeof(out_t);  // kVec or kVec / 2 (16-bit in, fp32 out)
  constexpr int kWarps = kThreads / 32;
  using InPack = Pack<in_t, kVec>;
  using OutPack = Pack<out_t, kOutVec>;
  extern __shared__ __align__(16) unsigned char staged_smem[];
  __shared__ float warp_m[kWarps], warp_s[kWarps], row_pair[2];
  in_t* const buffers = reinterpret_cast<in_t*>(staged_smem);
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;

  int64_t row = blockIdx.x;
  if (row >= rows) return;  // the whole block: no barrier is left waiting
  StagedRow cur = staged_row<kVec>(x + row * in_stride, dim_size);
  in_t edge{};
  int edge_at = -1;
  stage_row<kVec, kThreads>(x + row * in_stride, cur, buffers, t, edge, edge_at);

  for (int buf = 0; row < rows; row += gridDim.x, buf ^= 1) {
    in_t* const b = buffers + buf * buffer_elems;
    // The row's own end elements, then every thread's copies: all visible
    // after the barrier.
    if (edge_at >= 0) b[cur.lead + edge_at] = edge;
    cp_async_wait_all();
    __syncthreads();

    // The next row into the other buffer, read last before the barrier above.
    const int64_t next = row + gridDim.x;
    StagedRow nxt{};
    if (next < rows) {
      nxt = staged_row<kVec>(x + next * in_stride, dim_size);
      stage_row<kVec, kThreads>(x + next * in_stride, nxt, buffers + (buf ^ 1) * buffer_elems, t,
                                edge, edge_at);
    } else {
      edge_at = -1;
    }

    // Chunks of the buffer: q covers buf[q * kVec, + kVec); its elements
    // p in [lead, lead + dim_size) are the row's.
    const int end = cur.lead + static_cast<int>(dim_size);
    const int n_chunks = (end + kVec - 1) / kVec;
    const auto whole = [&](int q) { return q * kVec >= cur.lead && (q + 1) * kVec <= end; };
    const auto chunk = [&](int q, float (&v)[kVec]) {
      const InPack pk = *reinterpret_cast<const InPack*>(b + q * kVec);
      const bool all = whole(q);
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        const int p = q * kVec + j;
        v[j] = all || (p >= cur.lead && p < end) ? static_cast<float>(pk.v[j]) : -INFINITY;
      }
    };

    float m = -INFINITY, s = 0.f;
    for (int q = t; q < n_chunks; q += kThreads) {
      float v[kVec];
      chunk(q, v);
#pragma unroll
      for (int j = 0; j < kVec; ++j) m = nan_propagating_max(m, v[j]);
    }
    if (m != -INFINITY) {
      with_exp_shift(m, [&](auto exp) {
        for (int q = t; q < n_chunks; q += kThreads) {
          float v[kVec];
          chunk(q, v);
#pragma unroll
          for (int j = 0; j < kVec; ++j) s += exp(v[j]);
        }
      });
    }
    // The block's pair: lanes, then the warps' pairs through warp 0.
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
      merge_online(m, s, __shfl_xor_sync(0xffffffffu, m, offset),
                   __shfl_xor_sync(0xffffffffu, s, offset));
    }
    if (lane == 0) warp_m[warp] = m, warp_s[warp] = s;
    __syncthreads();
    if (warp == 0) {
      m = lane < kWarps ? warp_m[lane] : -INFINITY;
      s = lane < kWarps ? warp_s[lane] : 0.f;
#pragma unroll
      for (int offset = 16; offset > 0; offset >>= 1) {
        merge_online(m, s, __shfl_xor_sync(0xffffffffu, m, offset),
                     __shfl_xor_sync(0xffffffffu, s, offset));
      }
      if (lane == 0) row_pair[0] = m, row_pair[1] = s;
    }
    __syncthreads();
    const float row_m = row_pair[0];
    // A row of -inf only gives NaN, as torch.softmax (e^(-inf - -inf)).
    const float inv_sum = row_m == -INFINITY ? NAN : 1.f / row_pair[1];

    out_t* const yrow = y + row * dim_size;
    // y's packs line up with the buffer's chunks when y's row starts `lead`
    // elements past a 16-byte boundary modulo its pack: every contiguous row
    // (x and y then start at the same element offset).
    const auto y_elems = static_cast<int64_t>(reinterpret_cast<uintptr_t>(yrow) / sizeof(out_t));
    const bool aligned_y = reinterpret_cast<uintptr_t>(yrow) % sizeof(out_t) == 0 &&
                           (y_elems - cur.lead) % kOutVec == 0;
    with_exp_shift(row_m, [&](auto exp) {
      if (aligned_y) {
        for (int q = t; q < n_chunks; q += kThreads) {
          const InPack pk = *reinterpret_cast<const InPack*>(b + q * kVec);
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
        for (int i = t; i < dim_size; i += kThreads) {
          yrow[i] = static_cast<out_t>(exp(static_cast<float>(b[cur.lead + i])) * inv_sum);
        }
      }
    });
    cur = nxt;
  }
}

}  // namespace memopt
