// Asynchronous global -> shared copies (cp.async, sm_80+) for kernels that
// want data on chip later without holding registers for it meanwhile.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace memopt {

// The 16 bytes at global `src` to shared `dst` (both 16-byte aligned), in L2
// only on the way (.cg): the bytes are read from shared memory, not again.
// No src-size operand for a part-chunk: compute-sanitizer's memcheck counts
// the whole 16 bytes as read whatever the src-size (an out-of-bounds read at
// a 66-byte weight, H200, 2026-12-04), so callers copy whole chunks only.
__device__ __forceinline__ void cp_async_16_to_shared(void* dst, const void* src) {
  const auto shared = static_cast<uint32_t>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(shared), "l"(src) : "memory");
}

// kBytes (4 or 8) at global `src` to shared `dst`, both kBytes-aligned,
// through L1 (.ca: .cg takes 16-byte copies only). The wgmma epilogue's bias
// pairs (kernels/wgmma_sm90.cuh, stage_bias).
template <int kBytes>
__device__ __forceinline__ void cp_async_small_to_shared(void* dst, const void* src) {
  static_assert(kBytes == 4 || kBytes == 8, "cp.async.ca copies 4, 8 or 16 bytes");
  const auto shared = static_cast<uint32_t>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(shared), "l"(src), "n"(kBytes)
               : "memory");
}

// `bytes` (a multiple of 16) from `src` to `dst` (both 16-byte aligned), the
// `threads` threads of the block (this one `t`) 16 bytes each in turn.
// Completes at cp_async_wait_all.
__device__ __forceinline__ void cp_async_bytes_to_shared(void* dst, const void* src, int bytes,
                                                         int t, int threads) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  for (int off = t * 16; off < bytes; off += threads * 16) cp_async_16_to_shared(d + off, s + off);
}

// Every cp.async this thread issued has landed (its own: a block barrier
// after it makes the other threads' copies visible).
__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_all;\n" ::: "memory");
}

}  // namespace memopt
