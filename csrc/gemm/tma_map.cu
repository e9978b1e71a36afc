// make_tma_map (tma_map.h): cuTensorMapEncodeTiled from the driver, found once
// through the runtime (no link against libcuda: torch's extension build does
// not add it).
#include "gemm/tma_map.h"

#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace memopt {
namespace {

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

}  // namespace

CUtensorMap make_tma_map(const void* base, HalfType dtype, int64_t rows, int64_t cols,
                         int64_t row_stride, uint32_t box_rows, uint32_t box_cols,
                         TmaSwizzle swizzle) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const int elem_bytes = dtype == HalfType::tf32 ? 4 : 2;
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(row_stride) * elem_bytes};
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult r = encode_tiled()(
      &map,
      dtype == HalfType::bf16   ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
      : dtype == HalfType::fp16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                : CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
      2, const_cast<void*>(base), dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      swizzle == TmaSwizzle::bytes128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    throw std::runtime_error("memopt: cuTensorMapEncodeTiled failed with CUresult " +
                             std::to_string(static_cast<int>(r)));
  }
  return map;
}

}  // namespace memopt
