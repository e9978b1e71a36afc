// TMA tensor maps of the bfloat16 / float16 / float32 matrices the Hopper rungs read
// (wgmma_sm90.cu, splitk_sm90.cu): one place that finds the driver's encoder
// and sets the swizzle. ATen-free.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "gemm/half_gemm.h"

namespace memopt {

// How a box lies in shared memory: 128-byte swizzled (box_cols elements =
// 128 bytes, one swizzle row: every operand load and most output stores), or
// dense rows of box_cols elements (a multiple of 16 bytes: the 128 x 168
// tile's 56-column output boxes, 112 bytes a row, no swizzle width).
enum class TmaSwizzle { none, bytes128 };

// A 2-D tensor map of a row-major matrix with `rows` rows of `cols` elements
// (2 bytes, or 4 for tf32's float32), `row_stride` elements apart (a multiple
// of 16 bytes), read in boxes of box_rows x box_cols laid out as `swizzle`
// says; out-of-bounds elements read as zero and are dropped on stores.
// Throws std::runtime_error when the driver refuses.
CUtensorMap make_tma_map(const void* base, HalfType dtype, int64_t rows, int64_t cols,
                         int64_t row_stride, uint32_t box_rows, uint32_t box_cols,
                         TmaSwizzle swizzle = TmaSwizzle::bytes128);

}  // namespace memopt
