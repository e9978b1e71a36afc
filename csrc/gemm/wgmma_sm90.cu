// Launcher of the wgmma rung (kernels/wgmma_sm90.cuh): the TMA tensor maps of
// A and B, the persistent grid, the shared-memory opt-in. ATen-free; the
// caller (gemm_cuda.cu) checks the launch and only calls this on compute
// capability 9.0 with operands that pass wgmma_operands_ok.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/device_info.h"
#include "gemm/half_gemm.h"
#include "gemm/kernels/wgmma_sm90.cuh"

namespace memopt {
namespace {

// cuTensorMapEncodeTiled from the driver, found once through the runtime (no
// link against libcuda: torch's extension build does not add it).
PFN_cuTensorMapEncodeTiled_v12000 encode_tiled() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* ptr = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &ptr, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      ptr = nullptr;
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(ptr);
  }();
  if (fn == nullptr) throw std::runtime_error("memopt: the driver has no cuTensorMapEncodeTiled");
  return fn;
}

// A 2-D tensor map of a row-major matrix with `rows` rows of `cols` elements,
// `row_stride` elements apart, read in boxes of box_rows x box_cols (box_cols
// x 2 bytes = 128: one swizzle row), swizzled by 128 bytes; out-of-bounds
// elements read as zero.
CUtensorMap make_map(const void* base, HalfType dtype, int64_t rows, int64_t cols,
                     int64_t row_stride, uint32_t box_rows, uint32_t box_cols) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(row_stride) * 2};
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult r = encode_tiled()(
      &map, dtype == HalfType::bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
      2, const_cast<void*>(base), dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    throw std::runtime_error("memopt: cuTensorMapEncodeTiled failed with CUresult " +
                             std::to_string(static_cast<int>(r)));
  }
  return map;
}

bool aligned_16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

template <typename T, bool kBKMajor, int kClusterM, int kStaged>
void launch_typed(const HalfGemmArgs& p, cudaStream_t stream) {
  using namespace wgmma;
  const CUtensorMap map_a = make_map(p.a, p.dtype, p.M, p.K, p.a_stride_m, kBlockM, kBlockK);
  // K-major W: each CTA of a cluster loads (and multicasts) 256 / kClusterM rows.
  const CUtensorMap map_b =
      kBKMajor ? make_map(p.b, p.dtype, p.N, p.K, p.b_stride, kBlockN / kClusterM, kBlockK)
               : make_map(p.b, p.dtype, p.K, p.N, p.b_stride, kBlockK, kBoxN);
  const int64_t unit_rows = ((p.M + kBlockM - 1) / kBlockM + kClusterM - 1) / kClusterM;
  const int64_t units = unit_rows * ((p.N + kBlockN - 1) / kBlockN);
  // The output as 64 x 64 boxes (only read with kStaged > 0; N % 8 == 0 then).
  const CUtensorMap map_out = kStaged > 0 ? make_map(p.out, p.dtype, p.M, p.N, p.N, 64, 64) : map_a;
  const auto kernel = gemm_wgmma_kernel<T, kBKMajor, kClusterM, kStaged>;
  constexpr int kSmemBytes = smem_bytes_of<kStaged>();
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
  const KernelArgs args{p.out, p.bias, p.M, p.N, p.K, p.act};
  cudaLaunchConfig_t config = {};
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = kSmemBytes;
  config.stream = stream;
  cudaLaunchAttribute cluster = {};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = kClusterM;
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  config.attrs = &cluster;
  config.numAttrs = 1;
  // A persistent grid must fit at once. Clusters are placed inside one GPC,
  // and a GPC with an odd number of free SMs leaves one idle, so fewer than
  // sm_count / 2 pairs may fit: ask the occupancy API rather than divide.
  int64_t resident = sm_count() / kClusterM;
  if constexpr (kClusterM > 1) {
    static int fits = 0;  // per instantiation: same kernel, same answer
    if (fits == 0) {
      config.gridDim = dim3(static_cast<unsigned>(resident * kClusterM));
      if (cudaOccupancyMaxActiveClusters(&fits, kernel, &config) != cudaSuccess || fits <= 0) {
        cudaGetLastError();
        fits = static_cast<int>(resident);
      }
      if (std::getenv("MEMOPT_WGMMA_VERBOSE") != nullptr) {
        std::fprintf(stderr, "wgmma cluster %d staged %d: %d clusters resident of %lld wanted\n",
                     kClusterM, kStaged, fits, static_cast<long long>(resident));
      }
    }
    resident = fits;
  }
  const int64_t clusters = std::min<int64_t>(units, resident);
  const unsigned grid = static_cast<unsigned>(clusters * kClusterM);
  if constexpr (kClusterM == 1) {
    kernel<<<grid, kThreads, kSmemBytes, stream>>>(map_a, map_b, map_out, args);
  } else {
    config.gridDim = dim3(grid);
    cudaLaunchKernelEx(&config, kernel, map_a, map_b, map_out, args);
  }
}

template <int kClusterM, int kStaged>
void launch_clustered(const HalfGemmArgs& p, cudaStream_t stream) {
  if (p.dtype == HalfType::bf16) {
    p.b_k_major ? launch_typed<__nv_bfloat16, true, kClusterM, kStaged>(p, stream)
                : launch_typed<__nv_bfloat16, false, kClusterM, kStaged>(p, stream);
  } else {
    p.b_k_major ? launch_typed<__half, true, kClusterM, kStaged>(p, stream)
                : launch_typed<__half, false, kClusterM, kStaged>(p, stream);
  }
}

// The output's tensor map needs rows a multiple of 16 bytes apart.
template <int kClusterM, int kStaged>
void launch_epilogue_tma(const HalfGemmArgs& p, cudaStream_t stream) {
  if (p.N % 8 == 0) {
    launch_clustered<kClusterM, kStaged>(p, stream);
  } else {
    launch_clustered<kClusterM, 0>(p, stream);
  }
}

}  // namespace

// TMA reads global memory through 16-byte-aligned addresses and row strides
// that are multiples of 16 bytes (8 elements); its coordinates are 32-bit.
bool wgmma_operands_ok(const HalfGemmArgs& p) {
  constexpr int64_t kMaxCoord = (int64_t{1} << 31) - 1;
  return aligned_16(p.a) && aligned_16(p.b) && p.a_stride_m % 8 == 0 && p.b_stride % 8 == 0 &&
         p.M <= kMaxCoord && p.N <= kMaxCoord && p.K <= kMaxCoord;
}

void launch_gemm_wgmma(const HalfGemmArgs& p, cudaStream_t stream) {
  launch_clustered<1, 0>(p, stream);
}

// Not yet measured: the 2-CTA multicast variant, built for benchmarks/tune/
// (wgmma_configs.cu) to time beside the plain kernel before it replaces it.
void launch_gemm_wgmma_cluster2(const HalfGemmArgs& p, cudaStream_t stream) {
  launch_clustered<2, 0>(p, stream);
}

// Not yet measured: the epilogue through shared memory and TMA stores, alone
// and with the 2-CTA clusters.
void launch_gemm_wgmma_tma_store(const HalfGemmArgs& p, cudaStream_t stream) {
  launch_epilogue_tma<1, 4>(p, stream);
}
void launch_gemm_wgmma_cluster2_tma_store(const HalfGemmArgs& p, cudaStream_t stream) {
  launch_epilogue_tma<2, 4>(p, stream);
}
void launch_gemm_wgmma_tma_store_4stage(const HalfGemmArgs& p, cudaStream_t stream) {
  launch_epilogue_tma<1, 2>(p, stream);
}
void launch_gemm_wgmma_cluster2_tma_store_4stage(const HalfGemmArgs& p, cudaStream_t stream) {
  launch_epilogue_tma<2, 2>(p, stream);
}

}  // namespace memopt
