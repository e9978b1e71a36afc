// Facts about the current CUDA device that launchers size their grids by,
// asked of the driver once per device: the launch path is hot, and
// cudaDeviceGetAttribute is a driver call. ATen-free.
#pragma once

#include <cuda_runtime.h>

#include <atomic>

namespace memopt {

// Devices whose facts are cached, per process (a slot each).
constexpr int kMaxDevices = 64;

// An attribute of the current device, asked of the driver once per device
// (`fallback` where it cannot say). Threads that race on the first call store
// the same value.
template <cudaDeviceAttr kAttr>
inline int device_attribute(int fallback) {
  static std::atomic<int> values[kMaxDevices];
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices) return fallback;
  int n = values[device].load(std::memory_order_relaxed);
  if (n == 0) {
    if (cudaDeviceGetAttribute(&n, kAttr, device) != cudaSuccess || n <= 0) {
      (void)cudaGetLastError();
      n = fallback;
    }
    values[device].store(n, std::memory_order_relaxed);
  }
  return n;
}

// Multiprocessors of the current device (132 on an H200).
inline int sm_count() { return device_attribute<cudaDevAttrMultiProcessorCount>(132); }

// Shared memory a block may opt in to (227 KB on Hopper, 48 KB where unknown),
// and what one SM holds for all its blocks (228 KB on Hopper).
inline int shared_memory_per_block_optin() {
  return device_attribute<cudaDevAttrMaxSharedMemoryPerBlockOptin>(48 * 1024);
}
inline int shared_memory_per_sm() {
  return device_attribute<cudaDevAttrMaxSharedMemoryPerMultiprocessor>(48 * 1024);
}

// Blocks of `kernel`, `threads` a block and no dynamic shared memory, that
// one SM of the current device holds at once (the occupancy calculator: its
// registers, shared memory and launch bounds), asked once per device: `cache`
// is the caller's slot array for this kernel (0: not asked yet). 1 where the
// driver cannot say.
template <typename Kernel>
inline int resident_blocks_per_sm(Kernel kernel, int threads,
                                  std::atomic<int> (&cache)[kMaxDevices]) {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices) return 1;
  int n = cache[device].load(std::memory_order_relaxed);
  if (n == 0) {
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, 0) != cudaSuccess ||
        n < 1) {
      (void)cudaGetLastError();  // no error left behind for the next launch's check
      n = 1;
    }
    cache[device].store(n, std::memory_order_relaxed);
  }
  return n;
}

// Raises `kernel`'s dynamic shared-memory limit to `bytes` on the current
// device, once per device (the attribute is per device; the call costs a
// driver round trip that a 10 us decode-shape launch should not pay every
// time). `seen` is the caller's per-kernel bitmask of devices already set.
template <typename Kernel>
inline void opt_in_shared_memory(Kernel kernel, int bytes, std::atomic<unsigned long long>& seen) {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices) device = 0;
  const unsigned long long bit = 1ull << device;
  if (seen.load(std::memory_order_relaxed) & bit) return;
  if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) ==
      cudaSuccess) {
    seen.fetch_or(bit, std::memory_order_relaxed);
  }
}

}  // namespace memopt
