// Launcher of softmax's staged rung (softmax_staged.h).
#include <ATen/core/Tensor.h>
#include <c10/cuda/CUDAException.h>

#include <algorithm>
#include <atomic>

#include "common/cluster_launch.cuh"
#include "common/device_info.h"
#include "common/dispatch.h"
#include "common/kernel_registry.h"
#include "softmax/kernels/v06_staged.cuh"
#include "softmax/softmax_staged.h"

namespace memopt {
namespace {

// The kernel's static shared memory (the warps' and the row's pairs: 288
// bytes), rounded up, left beside the two buffers.
constexpr int kStagedStaticBytes = 512;
// Shared memory the runtime keeps for itself in every block on an SM (1 KB
// on sm_80+), counted when fitting several blocks on one SM.
constexpr int kReservedSmemPerBlock = 1024;
// Clusters of 2 at most: over 4 and 8 CTAs a row (128256 / 256000 bf16, fp32
// 128256) staged ran at 60-66% / 57-60% / 64-67% of copy against online's and
// cluster's 71-76% / 62-68% / 89-93% (H100, docs/perf-notes.md): a row costs
// a CTA 1.8-4.9 us past its bytes' time, the more the more CTAs meet at its
// barrier, so only slices of ~100 KB carry it.
constexpr int kMaxStagedCluster = 2;

// One CTA's two buffers when a row is split over `cluster` CTAs.
int64_t buffers_bytes(const SoftmaxRows& p, int cluster) {
  const int64_t size = p.input.element_size();
  return 2 * (size == 4 ? staged_buffer_elems<float>(p.dim_size, cluster)
                        : staged_buffer_elems<at::Half>(p.dim_size, cluster)) * size;
}

bool buffers_fit(const SoftmaxRows& p, int cluster) {
  return buffers_bytes(p, cluster) + kStagedStaticBytes <= shared_memory_per_block_optin();
}

// The clusters of `kernel` resident at once with `smem` bytes a CTA, asked of
// the runtime once per device (ClusterLaunch::max_active_clusters).
template <typename Kernel>
int64_t resident_clusters(Kernel kernel, int cluster, size_t smem, cudaStream_t stream,
                          std::atomic<int> (&cache)[kMaxDevices]) {
  const int fallback = sm_count() / cluster;
  return once_per_device(cache, fallback, [&](int) {
    ClusterLaunch probe(dim3(static_cast<unsigned>(fallback * cluster)), dim3(kSoftmaxStagedThreads),
                        dim3(static_cast<unsigned>(cluster)), stream, smem);
    return probe.max_active_clusters(kernel);
  });
}

template <typename in_t, typename out_t, int kCluster>
void launch_typed(const SoftmaxRows& p, int64_t rows, cudaStream_t stream) {
  const int64_t smem = buffers_bytes(p, kCluster);
  const int64_t elems = smem / 2 / static_cast<int64_t>(sizeof(in_t));
  constexpr auto kernel = softmax_staged_kernel<in_t, out_t, kCluster>;
  opt_in_shared_memory_once<kernel>(shared_memory_per_block_optin() - kStagedStaticBytes);
  const in_t* x = p.input.const_data_ptr<in_t>();
  out_t* y = p.out.mutable_data_ptr<out_t>();
  if constexpr (kCluster == 1) {
    // Blocks an SM by shared memory, at most two of 1024 threads; at 50257
    // bf16 columns (200 KB of buffers) one.
    const int64_t per_sm = std::clamp<int64_t>(
        shared_memory_per_sm() / (smem + kStagedStaticBytes + kReservedSmemPerBlock), 1,
        2048 / kSoftmaxStagedThreads);
    const auto blocks = static_cast<unsigned>(std::min<int64_t>(rows, per_sm * sm_count()));
    kernel<<<blocks, kSoftmaxStagedThreads, static_cast<size_t>(smem), stream>>>(
        x, y, rows, p.dim_size, p.in_stride, elems);
  } else {
    static std::atomic<int> resident[kMaxDevices];
    const int64_t clusters = std::min<int64_t>(
        rows, resident_clusters(kernel, kCluster, static_cast<size_t>(smem), stream, resident));
    ClusterLaunch launch(dim3(static_cast<unsigned>(clusters * kCluster)),
                         dim3(kSoftmaxStagedThreads), dim3(kCluster), stream,
                         static_cast<size_t>(smem));
    C10_CUDA_CHECK(launch.launch(kernel, x, y, rows, p.dim_size, p.in_stride, elems));
  }
}

}  // namespace

int staged_cluster(const SoftmaxRows& p, bool clusters) {
  const int most = clusters ? kMaxStagedCluster : 1;
  const int forced = staged_cluster_override();
  if (forced > 0 && forced <= most && buffers_fit(p, forced)) return forced;
  for (int cluster = 1; cluster <= most; cluster *= 2) {
    if (buffers_fit(p, cluster)) return cluster;
  }
  return 0;
}

void launch_softmax_staged(const SoftmaxRows& p, int64_t rows, int cluster, cudaStream_t stream) {
  MEMOPT_DISPATCH_FLOAT_TYPES(p.input.scalar_type(), "memopt_softmax_staged", [&] {
    const auto launch = [&](auto out_zero) {
      using out_t = decltype(out_zero);
      return cluster == 1 ? launch_typed<scalar_t, out_t, 1>(p, rows, stream)
                          : launch_typed<scalar_t, out_t, 2>(p, rows, stream);
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
           kernel_address(softmax_staged_kernel<float, float, 1>)},
          {"softmax", "staged", "bfloat16, 1024 threads, two rows in shared memory",
           kernel_address(softmax_staged_kernel<at::BFloat16, at::BFloat16, 1>)},
          {"softmax", "staged", "float32, 1024 threads, a row over a cluster of 2",
           kernel_address(softmax_staged_kernel<float, float, 2>)},
          {"softmax", "staged", "bfloat16, 1024 threads, a row over a cluster of 2",
           kernel_address(softmax_staged_kernel<at::BFloat16, at::BFloat16, 2>)}};
}

MEMOPT_REGISTER_KERNELS(kSoftmaxStagedKernels, staged_kernels());

}  // namespace

}  // namespace memopt
