// Launcher of softmax's staged rung (softmax_staged.h).
#include <ATen/core/Tensor.h>
#include <c10/cuda/CUDAException.h>

#include <algorithm>
#include <atomic>

#include "common/device_info.h"
#include "common/dispatch.h"
#include "common/kernel_registry.h"
#include "softmax/kernels/v06_staged.cuh"
#include "softmax/softmax_staged.h"

namespace memopt {
namespace {

// The kernel's static shared memory (the warps' and the row's pairs: 272
// bytes by ptxas), rounded up, left beside the two buffers.
constexpr int kStagedStaticBytes = 512;
// Shared memory the runtime keeps for itself in every block on an SM (1 KB
// on sm_80+), counted when fitting several blocks on one SM.
constexpr int kReservedSmemPerBlock = 1024;

int64_t buffers_bytes(const SoftmaxRows& p) {
  const int64_t size = p.input.element_size();
  return 2 * (size == 4 ? staged_buffer_elems<float>(p.dim_size)
                        : staged_buffer_elems<at::Half>(p.dim_size)) * size;
}

}  // namespace

bool staged_buffers_fit(const SoftmaxRows& p) {
  return buffers_bytes(p) + kStagedStaticBytes <= shared_memory_per_block_optin();
}

void launch_softmax_staged(const SoftmaxRows& p, int64_t rows, cudaStream_t stream) {
  const int64_t smem = buffers_bytes(p);
  // Blocks an SM by shared memory, at most two of 1024 threads; at 50257
  // bf16 columns (200 KB of buffers) one.
  const int64_t per_sm = std::clamp<int64_t>(
      shared_memory_per_sm() / (smem + kStagedStaticBytes + kReservedSmemPerBlock), 1,
      2048 / kSoftmaxStagedThreads);
  const auto blocks = static_cast<unsigned>(std::min<int64_t>(rows, per_sm * sm_count()));
  MEMOPT_DISPATCH_FLOAT_TYPES(p.input.scalar_type(), "memopt_softmax_staged", [&] {
    const auto launch = [&](auto out_zero) {
      using out_t = decltype(out_zero);
      const auto kernel = softmax_staged_kernel<scalar_t, out_t>;
      static std::atomic<unsigned long long> opted_in{0};
      opt_in_shared_memory(kernel, shared_memory_per_block_optin() - kStagedStaticBytes, opted_in);
      kernel<<<blocks, kSoftmaxStagedThreads, static_cast<size_t>(smem), stream>>>(
          p.input.const_data_ptr<scalar_t>(), p.out.mutable_data_ptr<out_t>(), rows, p.dim_size,
          p.in_stride, smem / 2 / static_cast<int64_t>(sizeof(scalar_t)));
    };
    if (p.widen_to_fp32) {
      launch(float{});
    } else {
      launch(scalar_t{});
    }
  });
}

// kernel_info (common/kernel_registry.h): staged's kernels for the softmax
// benchmark's dtypes, float32 and bfloat16 in and out.
namespace {

std::vector<KernelEntry> staged_kernels() {
  return {{"softmax", "staged", "float32, 1024 threads, two rows in shared memory",
           kernel_address(softmax_staged_kernel<float, float>)},
          {"softmax", "staged", "bfloat16, 1024 threads, two rows in shared memory",
           kernel_address(softmax_staged_kernel<at::BFloat16, at::BFloat16>)}};
}

MEMOPT_REGISTER_KERNELS(kSoftmaxStagedKernels, staged_kernels());

}  // namespace

}  // namespace memopt
