// What the timeline-stamp probes (stamp_wgmma_split.cu, stamp_wgmma_streamk.cu)
// share: a CUDA call checked (a failure exits with its line), the linear
// layer's operands filled with small pseudo-random values (never zeros, so the
// tensor cores do real work and the outputs are not all equal), a launch timed
// by CUDA events, and the stamps read back. Include it after defining
// MEMOPT_WGMMA_STAMPS.
#pragma once

#ifndef MEMOPT_WGMMA_STAMPS
#error "define MEMOPT_WGMMA_STAMPS before including the kernels and stamp_common.cuh"
#endif

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "gemm/kernels/stamps.cuh"

#define CHECK(call)                                                                  \
  do {                                                                               \
    cudaError_t e = (call);                                                          \
    if (e != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

__global__ void fill(__nv_bfloat16* p, int64_t n, uint32_t seed) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed;
    h ^= h >> 13;
    p[i] = __float2bfloat16((static_cast<float>(h & 0xffff) / 65536.f - 0.5f) * 0.05f);
  }
}

// x [M, K] and W [N, K] filled (seeds 1 and 2), out [M, N] uninitialized.
struct LinearOperands {
  __nv_bfloat16 *x = nullptr, *w = nullptr, *out = nullptr;
  LinearOperands(int64_t M, int64_t N, int64_t K) {
    CHECK(cudaMalloc(&x, sizeof(__nv_bfloat16) * M * K));
    CHECK(cudaMalloc(&w, sizeof(__nv_bfloat16) * N * K));
    CHECK(cudaMalloc(&out, sizeof(__nv_bfloat16) * M * N));
    fill<<<264, 256>>>(x, M * K, 1);
    fill<<<264, 256>>>(w, N * K, 2);
    CHECK(cudaGetLastError());
  }
  ~LinearOperands() {
    cudaFree(x);
    cudaFree(w);
    cudaFree(out);
  }
};

// `launch()` between two CUDA events, then the device synchronized: its time in µs.
template <typename Launch>
float timed_us(cudaEvent_t start, cudaEvent_t end, const Launch& launch) {
  CHECK(cudaEventRecord(start));
  launch();
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(end));
  CHECK(cudaDeviceSynchronize());
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, end));
  return ms * 1e3f;
}

// g_stamps copied back: at(block, warpgroup, slot) in ns of %globaltimer.
struct StampReadout {
  static constexpr size_t kCount =
      static_cast<size_t>(memopt::kStampBlocks) * memopt::kStampGroups * memopt::kStampSlots;
  std::vector<uint64_t> host = std::vector<uint64_t>(kCount);
  StampReadout() {
    CHECK(cudaMemcpyFromSymbol(host.data(), memopt::g_stamps, host.size() * sizeof(uint64_t)));
  }
  uint64_t at(int block, int group, int slot) const {
    return host[(static_cast<size_t>(block) * memopt::kStampGroups + group) *
                    memopt::kStampSlots + slot];
  }
};
