// l2_flush_deep: the kernel timer's "deep" L2 flush (torch_memopt/bench/
// timing.py). The timer's ordinary flush zeroes 256 MiB with plain stores, and
// a line that a kernel loaded with an L2 evict_last hint (torch.compile's
// Triton code marks a norm's weight and the first of two loads of its row so)
// is replaced only when its set holds no line of normal priority: on the H100
// an 8 MB buffer read with the hint came back after the flush in 6.43 us
// against 7.94 read without it, and torch.compile's rms_norm at 512 x 4096
// took 5.38 us under the plain flush and 8.19 under one that evicted its kept
// lines, where ours and Liger's moved by 0.2-0.5 us
// (benchmarks/tune/flush_survival.py, docs/perf-notes.md, 2026-12-05).
//
// The op stores zeros over the buffer with an evict_last policy. The timer
// runs it after its plain zero pass: the buffer's lines then outrank every
// line of normal priority and age out any line a kernel kept with the hint,
// in LRU order, so after 4x the L2 (60 MB on the H200) no line of before is
// left. The L2 ends full of the flush's dirty zeros, as after the plain
// flush, but at evict_last priority. Measured so (a Triton kernel of the
// same stores, H100): x.neg() over 1-4096 rows of 4096 bf16 moved by -0.3 to
// +0.4 us against the plain flush. Not measured yet: a kernel that re-reads
// through the L2 (a GEMM's tiles), whose own normal lines now go before the
// flush's; the plain flush stays the default.
//
// Tried and dropped: a second pass demoting every line back to normal
// priority (applypriority.global.L2::evict_normal, one a 128-byte line), so
// that the L2 would end exactly as after the plain flush. Both reads of
// survival then took the same time (8 MB: 14.56 / 14.66 us), but every kernel
// timed after it slowed by a near-fixed 5-7 us (that 8 MB read 7.97 -> 14.56,
// x.neg() at 512 x 4096 7.71 -> 14.40, cuBLAS 512 x 4096 x 4096 31.5 ->
// 38.9), most likely the 2M priority changes still being worked off in the
// L2 when the timed kernel began.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <cstdint>

#include "common/device_info.h"

namespace memopt {
namespace {

constexpr int kFlushThreads = 256;
constexpr int64_t kLineBytes = 128;  // one L2 line

__global__ void zero_evict_last_kernel(uint4* dst, int64_t packs) {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < packs;
       i += stride) {
    asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1, %1, %1, %1}, %2;" ::"l"(dst + i),
                 "r"(0u), "l"(policy)
                 : "memory");
  }
}

void l2_flush_deep(at::Tensor& buffer) {
  TORCH_CHECK(buffer.is_contiguous(),
              "memopt_probe::l2_flush_deep: expected buffer to be contiguous, got strides ",
              buffer.strides());
  const int64_t bytes = buffer.numel() * static_cast<int64_t>(buffer.element_size());
  TORCH_CHECK(bytes % kLineBytes == 0 &&
                  reinterpret_cast<uintptr_t>(buffer.data_ptr()) % kLineBytes == 0,
              "memopt_probe::l2_flush_deep: expected buffer to be whole 128-byte lines, 128-byte "
              "aligned, got ",
              bytes, " bytes at ", buffer.data_ptr());
  if (bytes == 0) return;
  const c10::cuda::CUDAGuard device_guard(buffer.device());
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  // 4 blocks an SM, each thread striding: the store rate of a plain zero_.
  const unsigned blocks = static_cast<unsigned>(4 * sm_count());
  zero_evict_last_kernel<<<blocks, kFlushThreads, 0, stream>>>(
      static_cast<uint4*>(buffer.data_ptr()), bytes / 16);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

TORCH_LIBRARY_IMPL(memopt_probe, CUDA, m) { m.impl("l2_flush_deep", &l2_flush_deep); }

}  // namespace memopt
