// L2 prefetches (prefetch.global.L2) for kernels that will read data late and
// want it on chip by then without holding registers or shared memory for it.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace memopt {

constexpr int kL2LineBytes = 128;

// Every 128-byte line of [src, src + bytes) towards L2, the `threads` threads
// of the block (this one `t`) a line each in turn. A hint with no result:
// nothing waits for it. Each address is clamped into the range (the first
// line starts at src, not at its line's start), so no prefetch names a byte
// outside the tensor.
__device__ __forceinline__ void prefetch_bytes_to_l2(const void* src, int64_t bytes, int t,
                                                     int threads) {
  const auto begin = reinterpret_cast<uintptr_t>(src);
  const uintptr_t first_line = begin / kL2LineBytes * kL2LineBytes;
  for (uintptr_t line = first_line + static_cast<uintptr_t>(t) * kL2LineBytes;
       line < begin + static_cast<uintptr_t>(bytes);
       line += static_cast<uintptr_t>(threads) * kL2LineBytes) {
    const uintptr_t at = line < begin ? begin : line;
    asm volatile("prefetch.global.L2 [%0];\n" ::"l"(at));
  }
}

}  // namespace memopt
