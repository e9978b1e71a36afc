// Facts about the current CUDA device that launchers size their grids by,
// asked of the driver once per device: the launch path is hot, and
// cudaDeviceGetAttribute is a driver call. ATen-free.
#pragma once

#include <cuda_runtime.h>

#include <atomic>

namespace memopt {

// Multiprocessors of the current device (132 on an H200). Threads that race
// on the first call store the same value.
inline int sm_count() {
  constexpr int kMaxDevices = 64, kFallback = 132;
  static std::atomic<int> counts[kMaxDevices];
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices) return kFallback;
  int n = counts[device].load(std::memory_order_relaxed);
  if (n == 0) {
    if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || n <= 0) {
      n = kFallback;
    }
    counts[device].store(n, std::memory_order_relaxed);
  }
  return n;
}

}  // namespace memopt
