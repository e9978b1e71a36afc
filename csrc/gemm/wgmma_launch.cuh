// The wgmma rung's launch for one output tile shape (kernels/wgmma_sm90.cuh):
// the TMA tensor maps of A, B and the output, the persistent grid, the
// shared-memory opt-in, the dtype / layout / epilogue dispatch. Included by
// the launcher of each group of tile shapes (wgmma_sm90.cu: 128 x 256 and the
// dispatch; wgmma_tiles_128.cu, wgmma_tiles_64.cu, wgmma_tiles_192.cu,
// wgmma_tiles_168.cu: the narrower tiles), so that two cores compile the
// groups in parallel. ATen-free.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "common/cluster_launch.cuh"
#include "common/device_info.h"
#include "common/kernel_registry.h"
#include "gemm/gemm_plan.h"
#include "gemm/half_gemm.h"
#include "gemm/kernels/wgmma_sm90.cuh"
#include "gemm/tma_map.h"

namespace memopt {
namespace wgmma_launch {

inline bool aligned_16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// kStreamK: the grid and the shared tiles of gemm_plan.h's stream_k_split,
// the workspace p.workspace.
template <typename T, typename Tl, bool kBKMajor, int kClusterM, int kStaged,
          bool kStreamK = false>
void launch_typed(const HalfGemmArgs& p, cudaStream_t stream) {
  using namespace wgmma;
  constexpr int kBK = kBlockKOf<T>;
  const CUtensorMap map_a = make_tma_map(p.a, p.dtype, p.M, p.K, p.a_stride_m, Tl::kBlockM, kBK);
  // K-major W: each CTA of a cluster loads (and multicasts) kBlockN / kClusterM rows.
  const CUtensorMap map_b =
      kBKMajor ? make_tma_map(p.b, p.dtype, p.N, p.K, p.b_stride, Tl::kBlockN / kClusterM, kBK)
               : make_tma_map(p.b, p.dtype, p.K, p.N, p.b_stride, kBK, kBoxN);
  const int64_t unit_rows = ((p.M + Tl::kBlockM - 1) / Tl::kBlockM + kClusterM - 1) / kClusterM;
  const int64_t units = unit_rows * ((p.N + Tl::kBlockN - 1) / Tl::kBlockN);
  // The output as boxes of 64 rows x Tl::kOutBoxCols, swizzled at 64 columns
  // (only read with kStaged > 0; N % 8 == 0 then).
  const CUtensorMap map_out =
      kStaged > 0 ? make_tma_map(p.out, p.dtype, p.M, p.N, p.N, 64, Tl::kOutBoxCols,
                                 Tl::kOutSwizzled ? TmaSwizzle::bytes128 : TmaSwizzle::none)
                  : map_a;
  constexpr auto kernel = gemm_wgmma_kernel<T, Tl, kBKMajor, kClusterM, kStaged, kStreamK>;
  constexpr int kSmemBytes = Tl::template smem_bytes<kStaged>();
  opt_in_shared_memory_once<kernel>(kSmemBytes);
  KernelArgs args{p.out, p.bias, p.M, p.N, p.K, p.act};
  args.group_rows = wgmma_group_rows();
  if constexpr (kStreamK) {
    static_assert(kBK == 64, "stream_k_split counts k-tiles of 64 (16-bit types)");
    const TileShape tile{Tl::kBlockM, Tl::kBlockN};
    const StreamKSplit split = stream_k_split(p.M, p.N, p.K, tile, sm_count());
    const StreamKWorkspace ws = stream_k_workspace(split, tile);
    args.sk_units = split.sk_units;
    args.ws = {static_cast<int*>(p.workspace),
               reinterpret_cast<float*>(static_cast<uint8_t*>(p.workspace) + ws.flag_bytes)};
    const unsigned grid = static_cast<unsigned>(split.ctas);
    kernel<<<grid, Tl::kThreads, kSmemBytes, stream>>>(map_a, map_b, map_out, args);
    return;
  }
  ClusterLaunch cluster(dim3(1), dim3(Tl::kThreads), dim3(kClusterM), stream, kSmemBytes);
  // A persistent grid must fit at once. Clusters are placed inside one GPC,
  // and a GPC with an odd number of free SMs leaves one idle, so fewer than
  // sm_count / 2 pairs may fit: ask the occupancy API rather than divide.
  int64_t resident = sm_count() / kClusterM;
  if constexpr (kClusterM > 1) {
    static std::atomic<int> fits[kMaxDevices];  // per instantiation and device
    resident = once_per_device(fits, static_cast<int>(resident), [&](int) {
      cluster.config().gridDim = dim3(static_cast<unsigned>(resident * kClusterM));
      const int n = cluster.max_active_clusters(kernel);
      if (std::getenv("MEMOPT_WGMMA_VERBOSE") != nullptr) {
        std::fprintf(stderr, "wgmma cluster %d staged %d: %d clusters resident of %lld wanted\n",
                     kClusterM, kStaged, n, static_cast<long long>(resident));
      }
      return n;
    });
  }
  const int64_t clusters = std::min<int64_t>(units, resident);
  const unsigned grid = static_cast<unsigned>(clusters * kClusterM);
  if constexpr (kClusterM == 1) {
    kernel<<<grid, Tl::kThreads, kSmemBytes, stream>>>(map_a, map_b, map_out, args);
  } else {
    cluster.config().gridDim = dim3(grid);
    cluster.launch(kernel, map_a, map_b, map_out, args);  // checked by gemm_cuda.cu's launch check
  }
}

// bfloat16 / float16 (the callers send tf32 to launch_tile's own branch). A
// tile for K-major B only (Tl::kKMajor16BitOnly) gets no row-major instance:
// its launcher sends every other call to another tile.
template <typename Tl, int kClusterM, int kStaged, bool kStreamK = false>
void launch_clustered(const HalfGemmArgs& p, cudaStream_t stream) {
  if constexpr (Tl::kKMajor16BitOnly) {
    p.dtype == HalfType::bf16
        ? launch_typed<__nv_bfloat16, Tl, true, kClusterM, kStaged, kStreamK>(p, stream)
        : launch_typed<__half, Tl, true, kClusterM, kStaged, kStreamK>(p, stream);
  } else if (p.dtype == HalfType::bf16) {
    p.b_k_major ? launch_typed<__nv_bfloat16, Tl, true, kClusterM, kStaged, kStreamK>(p, stream)
                : launch_typed<__nv_bfloat16, Tl, false, kClusterM, kStaged, kStreamK>(p, stream);
  } else {
    p.b_k_major ? launch_typed<__half, Tl, true, kClusterM, kStaged, kStreamK>(p, stream)
                : launch_typed<__half, Tl, false, kClusterM, kStaged, kStreamK>(p, stream);
  }
}

// The output's tensor map needs a 16-byte aligned base and rows a multiple of
// 16 bytes apart; otherwise the epilogue stores from registers.
template <typename Tl, int kClusterM, int kStaged, bool kStreamK = false>
void launch_epilogue_tma(const HalfGemmArgs& p, cudaStream_t stream) {
  if (p.N % 8 == 0 && aligned_16(p.out)) {
    launch_clustered<Tl, kClusterM, kStaged, kStreamK>(p, stream);
  } else {
    launch_clustered<Tl, kClusterM, 0, kStreamK>(p, stream);
  }
}

// A tile's launch as the rung makes it: every staging box of a consumer's
// outputs at once (four for 256 columns: 3 stages then, measured faster than
// two boxes and 4 stages; docs/perf-notes.md), no cluster. tf32 (float32
// operands, W [N, K] K-major) stores from registers: a float pair is 8 bytes,
// so a warp's store fills whole 32-byte sectors (4 threads x 8 bytes a row),
// where 16-bit pairs filled half sectors.
// (A tile for K-major bf16 / fp16 only, Tl::kKMajor16BitOnly, has no tf32
// instance; its launcher never sends tf32 here.)
template <typename Tl>
void launch_tile(const HalfGemmArgs& p, cudaStream_t stream) {
  if constexpr (!Tl::kKMajor16BitOnly) {
    if (p.dtype == HalfType::tf32) return launch_typed<float, Tl, true, 1, 0>(p, stream);
  }
  launch_epilogue_tma<Tl, 1, Tl::kOutBoxes>(p, stream);
}

// kernel_info's entry (common/kernel_registry.h) for tile Tl's bfloat16
// kernel with the TMA-store epilogue (every staging box at once, as
// launch_tile runs it): linear's weight [N, K] with kBKMajor, gemm's row-major
// b without. label: "bfloat16, 128 x 192 tiles, epilogue through TMA stores".
template <typename Tl, bool kBKMajor>
KernelEntry tma_store_tile_entry(const char* op, const char* label) {
  return {op, "wgmma", label,
          kernel_address(wgmma::gemm_wgmma_kernel<__nv_bfloat16, Tl, kBKMajor, 1, Tl::kOutBoxes>)};
}

}  // namespace wgmma_launch
}  // namespace memopt
