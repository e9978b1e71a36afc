// Facts about the current CUDA device that launchers size their grids by,
// asked of the driver once per device: the launch path is hot, and
// cudaDeviceGetAttribute is a driver call. ATen-free.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>

namespace memopt {

// Devices whose facts are cached, per process (a slot each).
constexpr int kMaxDevices = 64;

// The current device's slot in the per-device caches below, -1 where the
// runtime cannot say or the process sees more than kMaxDevices devices.
inline int current_device_slot() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices) return -1;
  return device;
}

// `ask(device)`, once per device: `cache` is the caller's slot array (0: not
// asked yet). `fallback` where the device is unknown or the answer is not
// positive, kept as the answer (a fallback of 0 is asked again next time).
// Threads that race on the first call store the same value. Every launcher's
// occupancy and attribute query goes through here: the launch path is hot, and
// each query is a driver round trip.
template <typename Ask>
inline int once_per_device(std::atomic<int> (&cache)[kMaxDevices], int fallback, Ask ask) {
  const int device = current_device_slot();
  if (device < 0) return fallback;
  int n = cache[device].load(std::memory_order_relaxed);
  if (n == 0) {
    n = ask(device);
    if (n <= 0) n = fallback;
    cache[device].store(n, std::memory_order_relaxed);
  }
  return n;
}

// An attribute of the current device, asked of the driver once per device
// (`fallback` where it cannot say).
template <cudaDeviceAttr kAttr>
inline int device_attribute(int fallback) {
  static std::atomic<int> values[kMaxDevices];
  return once_per_device(values, fallback, [](int device) {
    int n = 0;
    if (cudaDeviceGetAttribute(&n, kAttr, device) != cudaSuccess) (void)cudaGetLastError();
    return n;
  });
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
  return once_per_device(cache, 1, [&](int) {
    int n = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, 0) != cudaSuccess) {
      (void)cudaGetLastError();  // no error left behind for the next launch's check
    }
    return n;
  });
}

// Raises kKernel's dynamic shared-memory limit to `bytes` on the current
// device, once per device (the attribute is per device; the call costs a
// driver round trip that a 10 us decode-shape launch should not pay every
// time). Each kernel has its own bitmask of devices already set, this
// template's static: a caller names the kernel and keeps no state.
// Where the call fails it is tried again next time, with the runtime's error
// cleared (a later launch check reads only that launch's error).
template <auto kKernel>
inline void opt_in_shared_memory_once(int bytes) {
  static std::atomic<unsigned long long> seen{0};
  const unsigned long long bit = 1ull << std::max(current_device_slot(), 0);
  if (seen.load(std::memory_order_relaxed) & bit) return;
  if (cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) !=
      cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  seen.fetch_or(bit, std::memory_order_relaxed);
}

}  // namespace memopt
