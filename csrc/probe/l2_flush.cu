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
// Two passes over the buffer:
// 1. zeros stored with an evict_last policy: the buffer's lines then outrank
//    every normal line and age out kept ones in LRU order, so after 4x the L2
//    (60 MB on the H200) no line of before is left;
// 2. applypriority evict_normal on every line: what stays resident is the
//    plain flush's end state, dirty zero lines of normal priority. Left
//    evict_last, the zeros would outrank a timed kernel's own lines, which
//    would then evict each other first: a kernel that re-reads its tiles
//    from L2 (a GEMM) would find less of it than under the plain flush.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <cstdint>

#include "common/device_info.h"

namespace memopt {
namespace {

constexpr int kFlushThreads = 256;
constexpr int64_t kLineBytes = 128;  // one L2 line: applypriority's only size

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

__global__ void demote_to_evict_normal_kernel(const char* base, int64_t lines) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < lines;
       i += stride) {
    asm volatile("applypriority.global.L2::evict_normal [%0], 128;" ::"l"(base + i * kLineBytes)
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
  demote_to_evict_normal_kernel<<<blocks, kFlushThreads, 0, stream>>>(
      static_cast<const char*>(buffer.data_ptr()), bytes / kLineBytes);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

TORCH_LIBRARY_IMPL(memopt_probe, CUDA, m) { m.impl("l2_flush_deep", &l2_flush_deep); }

}  // namespace memopt
