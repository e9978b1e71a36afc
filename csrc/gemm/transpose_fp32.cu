// Writes the transpose of a float32 matrix into a contiguous one: src [rows,
// cols] (unit column stride, rows src_stride apart) -> dst [cols, rows]. The
// fp32 and tf32 GEMM rungs use it to re-lay B where their kernels read the
// other layout better (gemm_cuda.cu says where). ATen-free.
//
// Why a kernel of its own: `t().contiguous()` through ATen's copy took about
// 125 us for 4096 x 4096 floats on the H200 (64 MB read + 64 MB written: 30 us
// at the 4249 GB/s copy bandwidth), 3.5x the bytes' time, and it sat inside
// the op's time (fp32 linear 4096^3: 3127 us against cuBLAS's 2702;
// benchmarks/results/tune/fp32_linear_h200.json).
//
// The classic shared-memory transpose: a block reads a 64-row x 32-column
// tile with each warp on one source row (32 floats, 128 B: whole sectors),
// and writes it out with each warp on one destination row (a source column:
// again 128 B). The tile's rows are 33 floats apart, so the column read
// (lanes on rows i..i+31 of one column) falls in 32 different banks
// (33 i + j = i + j mod 32) instead of one. Each thread keeps 8 loads in
// flight before the barrier: 8 warps x 8 x 128 B = 8 KB a block.
// Measured (H200, 4096 x 4096): 45-49 us inside fp32 linear (3127 -> 3052 us
// at 4096^3), ~32 us inside tf32 gemm (536 -> 416 us): 3-4 TB/s
// (benchmarks/results/tune/{fp32_linear,tf32}_transpose_h200.json).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "gemm/half_gemm.h"

namespace memopt {
namespace {

constexpr int kTileCols = 32;  // one warp's 128-byte row segment
constexpr int kWarps = 8;
constexpr int kTileRows = 64;  // 8 rows a thread: the loads in flight
constexpr int kRowsPerThread = kTileRows / kWarps;
constexpr int kColsPerThread = kTileCols / kWarps;
static_assert(kTileRows == 2 * kTileCols, "the write loop's two halves assume it");

__global__ void __launch_bounds__(kTileCols* kWarps)
    transpose_fp32_kernel(const float* __restrict__ src, int64_t src_stride,
                          float* __restrict__ dst, int64_t rows, int64_t cols) {
  // +1 column: the bank offset that makes the column read conflict-free.
  __shared__ float tile[kTileRows][kTileCols + 1];  // (source rows, source cols)
  const int lane = threadIdx.x, warp = threadIdx.y;
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * kTileCols;
  const int64_t col = col0 + lane;
  // Row tiles stride by gridDim.y (at most 65535): any row count.
  for (int64_t row0 = static_cast<int64_t>(blockIdx.y) * kTileRows; row0 < rows;
       row0 += static_cast<int64_t>(gridDim.y) * kTileRows) {
#pragma unroll
    for (int i = 0; i < kRowsPerThread; ++i) {
      const int r = warp + i * kWarps;
      const int64_t row = row0 + r;
      if (row < rows && col < cols) tile[r][lane] = __ldg(src + row * src_stride + col);
    }
    __syncthreads();
    // Destination row = source column col0 + j; its 64 entries are source rows
    // row0 .. row0 + 63, written by the warp in two 128-byte halves.
#pragma unroll
    for (int i = 0; i < kColsPerThread; ++i) {
      const int j = warp + i * kWarps;
      const int64_t out_row = col0 + j;
      if (out_row >= cols) continue;
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int r = lane + half * kTileCols;
        const int64_t out_col = row0 + r;
        if (out_col < rows) dst[out_row * rows + out_col] = tile[r][j];
      }
    }
    __syncthreads();  // the tile is read out before the next row tile fills it
  }
}

}  // namespace

void launch_transpose_fp32(const float* src, int64_t src_stride, float* dst, int64_t rows,
                           int64_t cols, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  const dim3 block(kTileCols, kWarps);
  const int64_t row_tiles = (rows + kTileRows - 1) / kTileRows;
  const dim3 grid(static_cast<unsigned>((cols + kTileCols - 1) / kTileCols),
                  static_cast<unsigned>(std::min<int64_t>(row_tiles, 65535)));
  transpose_fp32_kernel<<<grid, block, 0, stream>>>(src, src_stride, dst, rows, cols);
}

}  // namespace memopt
