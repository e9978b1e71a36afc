// Re-lays a matrix of 2-byte elements (bfloat16 / float16) with rows that
// break TMA's 16-byte rule (a row stride of 4095 elements, say) into rows a
// multiple of 8 elements apart, for the wgmma rung. ATen-free.
//
// Why a kernel of its own: the copy sits inside the op's time (4095^3 copies
// A and B, 2 x 33.5 MB read and written), and a strided at::copy_ of 2-byte
// elements into a narrowed view is a scalar element loop. Here each thread
// writes one aligned 16-byte chunk of a destination row (8 elements, zeros
// past the row's end: padding no one reads) from 8 two-byte loads that the
// warp's neighbours share sectors with.
//
// Measured: not yet (see docs/perf-notes.md for the odd-shape figures).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "common/device_info.h"
#include "gemm/half_gemm.h"

namespace memopt {
namespace {

constexpr int kThreads = 256;
constexpr int kChunk = 8;  // elements of one 16-byte store

__global__ void __launch_bounds__(kThreads) pad_rows_kernel(const uint16_t* __restrict__ src,
                                                            int64_t src_stride,
                                                            uint16_t* __restrict__ dst,
                                                            int64_t dst_stride, int64_t rows,
                                                            int64_t cols) {
  const int64_t chunks_per_row = (cols + kChunk - 1) / kChunk;
  const int64_t chunks = rows * chunks_per_row;
  for (int64_t c = blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x; c < chunks;
       c += static_cast<int64_t>(gridDim.x) * kThreads) {
    const int64_t row = c / chunks_per_row;
    const int64_t col = (c % chunks_per_row) * kChunk;
    const uint16_t* from = src + row * src_stride + col;
    uint16_t v[kChunk];
#pragma unroll
    for (int i = 0; i < kChunk; ++i) v[i] = col + i < cols ? from[i] : uint16_t{0};
    uint4 packed;
    packed.x = v[0] | static_cast<uint32_t>(v[1]) << 16;
    packed.y = v[2] | static_cast<uint32_t>(v[3]) << 16;
    packed.z = v[4] | static_cast<uint32_t>(v[5]) << 16;
    packed.w = v[6] | static_cast<uint32_t>(v[7]) << 16;
    *reinterpret_cast<uint4*>(dst + row * dst_stride + col) = packed;
  }
}

}  // namespace

void launch_pad_rows(const void* src, int64_t src_stride, void* dst, int64_t dst_stride,
                     int64_t rows, int64_t cols, cudaStream_t stream) {
  const int64_t chunks = rows * ((cols + kChunk - 1) / kChunk);
  // A grid-stride loop over 16 blocks an SM: enough loads in flight for HBM.
  const int64_t blocks = std::min<int64_t>((chunks + kThreads - 1) / kThreads, 16 * sm_count());
  pad_rows_kernel<<<static_cast<unsigned>(std::max<int64_t>(blocks, 1)), kThreads, 0, stream>>>(
      static_cast<const uint16_t*>(src), src_stride, static_cast<uint16_t*>(dst), dst_stride, rows,
      cols);
}

}  // namespace memopt
