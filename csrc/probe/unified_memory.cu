// Probe 8, unified memory: what it costs to get `bytes` of float32 that the
// CPU just wrote in front of a kernel that reads them, three ways.
//
//   mode 0  cudaMallocManaged; the CPU writes every float, so every page is
//           resident in host memory; the kernel's first touches fault, and the
//           driver migrates the pages in fault batches while warps wait.
//   mode 1  the same, with cudaMemPrefetchAsync to the GPU before the kernel:
//           the driver moves the range in bulk with no faults on the way.
//   mode 2  cudaMalloc plus a pinned (cudaMallocHost) staging buffer that the
//           CPU writes; one cudaMemcpyAsync host to device, then the kernel.
//
// Returns float64 [2] on the CPU: ms from the start of the migration or copy
// to the end of the kernel (mode 0: the kernel with its faults), and ms of the
// kernel alone, from a second launch right after, when the data is resident
// in device memory in every mode. The source material's claim: prefetching
// beats demand paging, and explicit copies from pinned memory are fastest.
//
// The reader is a grid-stride sum with 16-byte loads (bytes is a multiple of 4,
// so a scalar tail takes the last 0 to 3 floats), 8 blocks of 256 threads an
// SM (it needs 32 registers, so 2048 threads fit), one partial sum a block
// into a small device buffer: the stores keep the loads from being optimized
// away. Alone it should stream near HBM speed (8 GB at the H200's 4.8 TB/s is
// ~1.8 ms), so the first figure is dominated by how the data arrives.
//
// Everything runs on the current stream of the current device; the buffers are
// freed on every path, errors included (RAII guards below).
//
// Measured (H200, 2026-11-30, benchmarks/results/probe_h200.json), 512 MB:
// on demand 62.0 ms, prefetched 12.2 ms, explicit copy from pinned memory
// 9.9 ms (kernel included).
#include <ATen/cuda/CUDAContext.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdint>

#include "common/block_reduce.cuh"
#include "common/cuda_launch.cuh"
#include "common/device_info.h"
#include "probe/probe_device.h"

namespace memopt {
namespace {

constexpr int kThreads = 256;
constexpr int kBlocksPerSm = 8;  // 8 x 256 = 2048 threads, a full H200 SM
constexpr int64_t kMinBytes = 4 * 1024;
constexpr int64_t kMaxBytes = int64_t{8} << 30;

enum UnifiedMode : int { kDemandPaging = 0, kPrefetch = 1, kExplicitCopy = 2 };

__global__ void __launch_bounds__(kThreads)
    read_sum_kernel(const float* __restrict__ data, int64_t n, float* __restrict__ partial) {
  __shared__ float scratch[kThreads / 32];
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  // cudaMalloc and cudaMallocManaged return 256-byte aligned pointers.
  const float4* data4 = reinterpret_cast<const float4*>(data);
  const int64_t n4 = n / 4;
  float sum = 0.f;
  for (int64_t i = tid; i < n4; i += stride) {
    const float4 v = data4[i];
    sum += (v.x + v.y) + (v.z + v.w);
  }
  for (int64_t i = n4 * 4 + tid; i < n; i += stride) sum += data[i];
  sum = block_sum<kThreads / 32>(sum, scratch);
  if (threadIdx.x == 0) partial[blockIdx.x] = sum;
}

// Owners of one allocation or event each: the destructors free on every way
// out of unified_memory. They warn rather than throw (a destructor must not),
// as torch's own CUDA RAII types do.
struct DeviceBuffer {  // cudaMalloc or cudaMallocManaged
  void* ptr = nullptr;
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (ptr != nullptr) C10_CUDA_CHECK_WARN(cudaFree(ptr));
  }
};

struct PinnedBuffer {  // cudaMallocHost
  void* ptr = nullptr;
  PinnedBuffer() = default;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() {
    if (ptr != nullptr) C10_CUDA_CHECK_WARN(cudaFreeHost(ptr));
  }
};

struct Event {
  cudaEvent_t event = nullptr;
  Event() { C10_CUDA_CHECK(cudaEventCreate(&event)); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() {
    if (event != nullptr) C10_CUDA_CHECK_WARN(cudaEventDestroy(event));
  }
};

// Device memory for the probe outside torch's caching allocator, which may
// hold most of the GPU in cached blocks from earlier probes: on an
// out-of-memory error those are released and the allocation tried once more.
template <typename Allocate>
void allocate_device(Allocate allocate) {
  cudaError_t err = allocate();
  if (err == cudaErrorMemoryAllocation) {
    C10_CUDA_CLEAR_ERROR();
    c10::cuda::CUDACachingAllocator::emptyCache();
    err = allocate();
  }
  C10_CUDA_CHECK(err);
}

// The CPU's writes: a pattern of small integers (exact in float32), every
// float touched, so every page of a managed buffer is first touched on, and
// resident in, host memory.
void fill_on_host(float* data, int64_t n) {
  for (int64_t i = 0; i < n; ++i) data[i] = static_cast<float>(i & 1023);
}

void prefetch_to_device(const void* ptr, int64_t bytes, int device, cudaStream_t stream) {
#if CUDART_VERSION >= 13000
  // CUDA 13 takes a location and flags where 12.x took a device ordinal.
  cudaMemLocation location{};
  location.type = cudaMemLocationTypeDevice;
  location.id = device;
  C10_CUDA_CHECK(cudaMemPrefetchAsync(ptr, static_cast<size_t>(bytes), location, 0, stream));
#else
  C10_CUDA_CHECK(cudaMemPrefetchAsync(ptr, static_cast<size_t>(bytes), device, stream));
#endif
}

at::Tensor unified_memory(int64_t bytes, int64_t mode) {
  TORCH_CHECK(bytes >= kMinBytes && bytes <= kMaxBytes && bytes % 4 == 0,
              "memopt_probe::unified_memory: expected bytes to be a multiple of 4 in [", kMinBytes,
              ", ", kMaxBytes, "] (4 KB to 8 GB), got ", bytes);
  TORCH_CHECK(mode >= 0 && mode <= 2,
              "memopt_probe::unified_memory: expected mode 0 (managed, demand paging), 1 "
              "(managed, prefetched) or 2 (cudaMalloc + copy from pinned memory), got ",
              mode);
  const int device = probe::probe_device("unified_memory");
  const c10::cuda::CUDAGuard device_guard(static_cast<c10::DeviceIndex>(device));
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  const int64_t n = bytes / 4;
  const size_t size = static_cast<size_t>(bytes);

  DeviceBuffer data;
  PinnedBuffer staging;
  if (mode == kExplicitCopy) {
    allocate_device([&] { return cudaMalloc(&data.ptr, size); });
    C10_CUDA_CHECK(cudaMallocHost(&staging.ptr, size));
    fill_on_host(static_cast<float*>(staging.ptr), n);
  } else {
    allocate_device([&] { return cudaMallocManaged(&data.ptr, size, cudaMemAttachGlobal); });
    fill_on_host(static_cast<float*>(data.ptr), n);
  }

  const int64_t blocks = std::max<int64_t>(
      1, std::min<int64_t>(ceil_div<int64_t>(n / 4, kThreads), int64_t{kBlocksPerSm} * sm_count()));
  at::Tensor partial = at::empty({blocks}, at::TensorOptions().dtype(at::kFloat).device(
                                               at::kCUDA, static_cast<c10::DeviceIndex>(device)));
  // With lazy module loading (CUDA_MODULE_LOADING=LAZY, the default since
  // 12.2) the first launch would load this module inside the timed region;
  // asking for the kernel's attributes loads it here.
  cudaFuncAttributes attr{};
  C10_CUDA_CHECK(cudaFuncGetAttributes(&attr, read_sum_kernel));
  const auto launch_reader = [&] {
    read_sum_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        static_cast<const float*>(data.ptr), n, partial.mutable_data_ptr<float>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  };

  Event start, end, kernel_start, kernel_end;
  C10_CUDA_CHECK(cudaEventRecord(start.event, stream));
  if (mode == kPrefetch) prefetch_to_device(data.ptr, bytes, device, stream);
  if (mode == kExplicitCopy) {
    C10_CUDA_CHECK(cudaMemcpyAsync(data.ptr, staging.ptr, size, cudaMemcpyHostToDevice, stream));
  }
  launch_reader();
  C10_CUDA_CHECK(cudaEventRecord(end.event, stream));
  C10_CUDA_CHECK(cudaEventRecord(kernel_start.event, stream));
  launch_reader();
  C10_CUDA_CHECK(cudaEventRecord(kernel_end.event, stream));
  C10_CUDA_CHECK(cudaEventSynchronize(kernel_end.event));

  float total_ms = 0.f, kernel_ms = 0.f;
  C10_CUDA_CHECK(cudaEventElapsedTime(&total_ms, start.event, end.event));
  C10_CUDA_CHECK(cudaEventElapsedTime(&kernel_ms, kernel_start.event, kernel_end.event));
  at::Tensor result = at::empty({2}, at::TensorOptions().dtype(at::kDouble));
  result.mutable_data_ptr<double>()[0] = total_ms;
  result.mutable_data_ptr<double>()[1] = kernel_ms;
  return result;
}

}  // namespace

// unified_memory takes no tensor, so the dispatcher has no device key to
// route it by: a CUDA-only kernel would fail with "There were no tensor
// arguments to this function". CompositeExplicitAutograd is the slot it
// falls back to.
TORCH_LIBRARY_IMPL(memopt_probe, CompositeExplicitAutograd, m) {
  m.impl("unified_memory", &unified_memory);
}

}  // namespace memopt
