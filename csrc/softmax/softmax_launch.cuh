// The launches of softmax's online and cluster kernels (kernels/v04_online.cuh,
// v05_cluster.cuh) at a pack width: 16 bytes (softmax_cuda.cu) or one element
// (softmax_narrow.cu, for widths off the 16-byte pack). Included by each, so
// that two cores compile the two groups of instantiations in parallel.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "common/cluster_launch.cuh"
#include "common/cuda_launch.cuh"
#include "common/device_info.h"
#include "common/pack.cuh"
#include "softmax/kernels/v04_online.cuh"
#include "softmax/kernels/v05_cluster.cuh"
#include "softmax/softmax_common.h"

namespace memopt {

// The cluster rung: 512 threads a CTA up to 8 x 512 x 32 elements a row,
// 1024 past that (registers hold 262144 elements at most; wider rows re-read).
template <typename in_t, typename out_t, int kPackBytes = 16>
void launch_cluster(const SoftmaxRows& p, int64_t rows, cudaStream_t stream) {
  const bool wide = p.dim_size > kSoftmaxCluster * 512 * kSoftmaxThreadElems;
  // One cluster a row; at most 65535 row slots, each cluster then loops.
  ClusterLaunch cluster(dim3(kSoftmaxCluster, static_cast<unsigned>(std::min<int64_t>(rows, 65535))),
                        dim3(wide ? 1024 : 512), dim3(kSoftmaxCluster), stream);
  const auto kernel = wide ? softmax_cluster_kernel<in_t, out_t, 1024, kPackBytes>
                           : softmax_cluster_kernel<in_t, out_t, 512, kPackBytes>;
  C10_CUDA_CHECK(cluster.launch(kernel, p.input.const_data_ptr<in_t>(),
                                p.out.mutable_data_ptr<out_t>(), rows, p.dim_size, p.in_stride));
}

// 16-bit rows past online's registers (65536 elements) held as loaded, 8
// packs (64 elements) a thread, over the fewest CTAs of a cluster that hold
// the row, so that it is read once (online re-reads the rest). CTAs of 512
// threads (32768 elements) run two an SM, so that one CTA's loads overlap the
// other's reduction, barrier and write, up to 8 of them (262144 elements);
// past that 8 of 1024 (524288); ctas 0 past that.
struct HeldShape {
  int threads, ctas;
};
constexpr int kHeldThreadElems = kWideRowVecs * 8;  // 16-bit packs a thread, as loaded
constexpr int64_t kHeldElems = 1024 * kHeldThreadElems;  // online's registers, 16-bit
inline HeldShape held_shape(int64_t dim_size) {
  for (const HeldShape shape : {HeldShape{512, 4}, HeldShape{512, 8}, HeldShape{1024, 8}}) {
    if (dim_size <= int64_t{shape.threads} * kHeldThreadElems * shape.ctas) return shape;
  }
  return {1024, 0};
}

template <typename in_t, typename out_t>
void launch_cluster_held(const SoftmaxRows& p, int64_t rows, cudaStream_t stream) {
  static_assert(sizeof(in_t) == 2, "16-bit rows: kWideRowVecs packs of 8 a thread");
  constexpr int kVecs = kWideRowVecs;
  const HeldShape shape = held_shape(p.dim_size);
  const auto launch = [&](auto kernel) {
    ClusterLaunch cluster(
        dim3(shape.ctas, static_cast<unsigned>(std::min<int64_t>(rows, 65535))),
        dim3(shape.threads), dim3(shape.ctas), stream);
    C10_CUDA_CHECK(cluster.launch(kernel, p.input.const_data_ptr<in_t>(),
                                  p.out.mutable_data_ptr<out_t>(), rows, p.dim_size, p.in_stride));
  };
  if (shape.threads == 512) {
    return shape.ctas == 4 ? launch(softmax_cluster_kernel<in_t, out_t, 512, 16, 4, kVecs, true>)
                           : launch(softmax_cluster_kernel<in_t, out_t, 512, 16, 8, kVecs, true>);
  }
  launch(softmax_cluster_kernel<in_t, out_t, 1024, 16, 8, kVecs, true>);
}

template <typename in_t, typename out_t, int kThreads, int kVecs, bool kRaw = false,
          int kPackBytes = 16, bool kPeel = false>
void launch_online(const SoftmaxRows& p, int64_t rows, cudaStream_t stream) {
  constexpr int kBlock = kThreads < kSoftmaxMinBlock ? kSoftmaxMinBlock : kThreads;
  constexpr int64_t kRowsPerBlock = kBlock / kThreads;
  softmax_online_kernel<in_t, out_t, kThreads, kVecs, kRaw, kPackBytes, kPeel>
      <<<static_cast<unsigned>(ceil_div<int64_t>(rows, kRowsPerBlock)), kBlock, 0, stream>>>(
          p.input.const_data_ptr<in_t>(), p.out.mutable_data_ptr<out_t>(), rows, p.dim_size,
          p.in_stride);
}

// The fewest threads a row (4 ... 1024) whose kVecs packs each hold its
// `packs` packs; 1024 past that (the rest re-read).
template <typename in_t, typename out_t, int kVecs, int kPackBytes, bool kPeel = false>
void launch_online_fewest(const SoftmaxRows& p, int64_t rows, int64_t packs, cudaStream_t stream) {
  const auto launch = [&](auto threads) {
    launch_online<in_t, out_t, decltype(threads)::value, kVecs, false, kPackBytes, kPeel>(p, rows,
                                                                                        stream);
  };
  const int64_t threads = ceil_div<int64_t>(packs, kVecs);
  if (threads <= 4) return launch(std::integral_constant<int, 4>{});
  if (threads <= 8) return launch(std::integral_constant<int, 8>{});
  if (threads <= 16) return launch(std::integral_constant<int, 16>{});
  if (threads <= 32) return launch(std::integral_constant<int, 32>{});
  if (threads <= 64) return launch(std::integral_constant<int, 64>{});
  if (threads <= 128) return launch(std::integral_constant<int, 128>{});
  if (threads <= 256) return launch(std::integral_constant<int, 256>{});
  if (threads <= 512) return launch(std::integral_constant<int, 512>{});
  launch(std::integral_constant<int, 1024>{});
}

// Grids of softmax_few_rows (softmax_common.h: 512 16-bit rows, fp32 never)
// rows or fewer spread each 16-byte-pack row of 33-512 packs (264-4096 16-bit
// columns, 132-2048 fp32) over 128-512 threads, one pack a thread, instead of
// row_vecs' four over 16-128. A few rows are latency-bound: the time is the
// row's trip to memory plus each warp's chain of loads, exponentials and
// merges, and four packs a thread make that chain four times as long on a
// quarter of the warps. The norms' same launch gained 3-9% at 1-64 rows of
// 768-2050 (H100, norm_vectorized_launch.cuh); softmax trails Liger-Kernel
// where it does not have it (H100 grid at 0a9a4b6, us, ours / Liger: bf16
// 1 / 8 / 64 / 512 x 2048 5.12 / 5.15 / 5.31 / 6.30 against 4.70 / 4.72 /
// 4.86 / 5.70, whose rows of 2048 take 256 threads; fp32 8 x 2048 5.06
// against 4.22). Rows of up to 32 packs keep their several rows a warp: one
// pack a thread would leave most of a 128-thread block idle behind a
// block-wide merge. The row's sums take another order than in a larger grid,
// so its output may differ from that grid's in the last bit (each grid is
// deterministic run to run).
constexpr int64_t kSoftmaxFewRowsMinPacks = 33, kSoftmaxFewRowsMaxPacks = 512;

template <typename in_t, typename out_t, bool kPeel>
bool launch_online_few_rows(const SoftmaxRows& p, int64_t rows, int64_t packs,
                            cudaStream_t stream) {
  if (rows > softmax_few_rows(sizeof(in_t)) || packs < kSoftmaxFewRowsMinPacks ||
      packs > kSoftmaxFewRowsMaxPacks) {
    return false;
  }
  if (packs <= 128) {
    launch_online<in_t, out_t, 128, 1, false, 16, kPeel>(p, rows, stream);
  } else if (packs <= 256) {
    launch_online<in_t, out_t, 256, 1, false, 16, kPeel>(p, rows, stream);
  } else {
    launch_online<in_t, out_t, 512, 1, false, 16, kPeel>(p, rows, stream);
  }
  return true;
}

// The 16-byte online kernel sized to the row: one pack a thread in small
// grids (launch_online_few_rows), else row_vecs packs a thread, and
// 16-bit rows past 16384 columns 8 packs a thread kept as loaded (kRaw),
// except where every row has an SM of its own (rows <= SMs) and 1024 threads
// hold it as floats (up to 32768 columns): two 512-thread blocks an SM gain
// nothing there, and the float packs take one e^x an element, not two
// (with v04_online.cuh's butterfly, bf16 1 / 8 / 64 x 32000: 8.56 / 8.79 /
// 10.0 -> 8.39 / 8.61 / 9.54 us, H200, 2026-12-06; Liger 7.78 / 8.03 / 9.23).
// kPeel: rows of any width and start (v04_online.cuh), sized by the packs
// that cover them.
template <typename in_t, typename out_t, bool kPeel = false>
void launch_online_sized(const SoftmaxRows& p, int64_t rows, cudaStream_t stream) {
  constexpr int64_t kVec = 16 / static_cast<int64_t>(sizeof(in_t));
  const int64_t packs = ceil_div<int64_t>(p.dim_size, kVec);
  if (launch_online_few_rows<in_t, out_t, kPeel>(p, rows, packs, stream)) return;
  if constexpr (sizeof(in_t) == 4) {
    if (row_vecs(packs, sizeof(in_t)) == kWideRowVecs) {
      if (packs <= 512 * kWideRowVecs) {
        return launch_online<in_t, out_t, 512, kWideRowVecs, false, 16, kPeel>(p, rows, stream);
      }
      return launch_online<in_t, out_t, 1024, kWideRowVecs, false, 16, kPeel>(p, rows, stream);
    }
  } else if (packs > 512 * kRowVecs) {
    if (packs <= 1024 * kRowVecs && rows <= sm_count()) {
      return launch_online<in_t, out_t, 1024, kRowVecs, false, 16, kPeel>(p, rows, stream);
    }
    if (packs <= 512 * kWideRowVecs) {
      return launch_online<in_t, out_t, 512, kWideRowVecs, true, 16, kPeel>(p, rows, stream);
    }
    return launch_online<in_t, out_t, 1024, kWideRowVecs, true, 16, kPeel>(p, rows, stream);
  }
  launch_online_fewest<in_t, out_t, kRowVecs, 16, kPeel>(p, rows, packs, stream);
}

}  // namespace memopt
