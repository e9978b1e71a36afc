// Probe 6, the local-memory trap: a small per-thread array that the compiler
// can keep in registers only when every index into it is known at compile
// time. Registers cannot be addressed by a value computed at run time, so an
// array indexed by one goes to local memory: per-thread slices of DRAM,
// cached in L1 and L2, reached with STL / LDL. The source material puts the
// cost of the dynamically indexed version at 3.2x the unrolled one.
//
// Both kernels compute, per element x = input[i],
//   a[j] = x * (j + 1)                 for j in 0..15
//   out[i] = sum over j of a[j] * a[15 - j], in order j = 0, 1, ..., 15
//
//   dynamic   the sum loop's trip count is a kernel argument (the launcher
//             passes 16, which the compiler cannot see), so the loop stays a
//             loop, a[j] and a[15 - j] are run-time indices and a[] lives in
//             local memory: 64 B stored to fill it (4 STL.128), 128 B loaded
//             back (a[j] as LDL.128, a[15 - j] as scalar LDL), 192 B of local
//             traffic a thread against 8 B of global.
//   unrolled  the trip count is the constant 16 and the loop is fully
//             unrolled: every index is a constant, a[] is 16 registers.
//
// The products and sums use __fmul_rn / __fadd_rn, which the compiler never
// contracts into FMAs: the unrolled version would otherwise fuse a[j] * a[15-j]
// into the running sum while the dynamic one cannot, and the two outputs would
// differ in the last bit. With them out is bitwise equal in both, which the
// driver checks.
//
// local_bytes reports cudaFuncGetAttributes().localSizeBytes of either kernel:
// ptxas gives dynamic a 64-byte stack frame (the 16 floats) and unrolled 0.
//
// Measured (H200, 2026-11-30, benchmarks/results/probe_h200.json): the trap
// 1.023 ms with 64 local bytes a thread, the unrolled fix 0.233 ms with 0:
// 4.40x.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <cstdint>
#include <limits>

#include "common/cuda_launch.cuh"
#include "probe/probe_checks.h"
#include "probe/probe_device.h"

namespace memopt {
namespace {

constexpr int kThreads = 256;
constexpr int kArrayLen = 16;

__device__ __forceinline__ void fill_array(float (&a)[kArrayLen], float x) {
#pragma unroll
  for (int j = 0; j < kArrayLen; ++j) a[j] = __fmul_rn(x, static_cast<float>(j + 1));
}

// `len` is always kArrayLen; it is an argument only to hide the trip count.
__global__ void __launch_bounds__(kThreads)
    local_array_dynamic_kernel(const float* __restrict__ input, float* __restrict__ out,
                               int64_t n, int len) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= n) return;
  float a[kArrayLen];
  fill_array(a, input[i]);
  float sum = 0.f;
  for (int j = 0; j < len; ++j) sum = __fadd_rn(sum, __fmul_rn(a[j], a[len - 1 - j]));
  out[i] = sum;
}

__global__ void __launch_bounds__(kThreads)
    local_array_unrolled_kernel(const float* __restrict__ input, float* __restrict__ out,
                                int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= n) return;
  float a[kArrayLen];
  fill_array(a, input[i]);
  float sum = 0.f;
#pragma unroll
  for (int j = 0; j < kArrayLen; ++j) sum = __fadd_rn(sum, __fmul_rn(a[j], a[kArrayLen - 1 - j]));
  out[i] = sum;
}

void local_array(const at::Tensor& input, at::Tensor& out, bool unrolled) {
  probe::check_input_and_out("local_array", input, out);
  const int64_t n = input.numel();
  if (n == 0) return;
  const c10::cuda::CUDAGuard device_guard(input.device());
  const int64_t blocks = ceil_div<int64_t>(n, kThreads);
  TORCH_CHECK(blocks <= std::numeric_limits<int32_t>::max(),
              "memopt_probe::local_array: expected at most 2^31 - 1 blocks of ", kThreads,
              " elements, got ", blocks);
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  const float* x = input.const_data_ptr<float>();
  float* y = out.mutable_data_ptr<float>();
  if (unrolled) {
    local_array_unrolled_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(x, y, n);
  } else {
    local_array_dynamic_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(x, y, n,
                                                                                      kArrayLen);
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// Local memory a thread of the chosen kernel, as the driver loaded it for the
// current device (the figure ptxas -v prints as the stack frame).
int64_t local_bytes(bool unrolled) {
  const c10::cuda::CUDAGuard device_guard(probe::probe_device("local_bytes"));
  cudaFuncAttributes attr{};
  if (unrolled) {
    C10_CUDA_CHECK(cudaFuncGetAttributes(&attr, local_array_unrolled_kernel));
  } else {
    C10_CUDA_CHECK(cudaFuncGetAttributes(&attr, local_array_dynamic_kernel));
  }
  return static_cast<int64_t>(attr.localSizeBytes);
}

}  // namespace

// local_bytes takes no tensor, so the dispatcher has no device key to route
// it by: a CUDA-only kernel would fail with "There were no tensor arguments
// to this function". CompositeExplicitAutograd is the slot it falls back to.
TORCH_LIBRARY_IMPL(memopt_probe, CompositeExplicitAutograd, m) {
  m.impl("local_bytes", &local_bytes);
}

TORCH_LIBRARY_IMPL(memopt_probe, CUDA, m) { m.impl("local_array", &local_array); }

}  // namespace memopt
