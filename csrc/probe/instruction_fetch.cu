// Probe 9, instruction fetch: what a kernel's code costs when it is not on
// chip. A short kernel (a norm over a few rows, a decode GEMM) runs once per
// call, and the benchmark's L2 flush (and, in a model, the other kernels
// between two calls) evicts its code as well as its data. Our rms_norm kernel
// for one row of 4096 bf16 was 1136 SASS instructions (18 KB) without a
// weight and 2376 (38 KB) with parameter staging (904 since the parameters
// load into registers), its path jumping forward over the code of the cases it
// does not take; Triton's (Liger) for the same row is 240 (3.8 KB), straight
// through (cuobjdump, sm_90a). The ~0.7 us between them at one row without a
// weight (H200, kernel timer; benchmarks/results/tune/
// norm_latency_probe_packs_w4096_h200.json) may be code fetched from HBM, or
// not: this probe says what cold code costs.
//
// One kernel a shape of code, one block of kCodeThreads threads (a norm row's
// block): kSegments runs of kRun instructions executed, each followed by a gap
// of kGap instructions laid out inline and jumped over (a branch on a
// run-time zero the compiler cannot see). Each instruction is one FADD (16
// bytes of SASS) on one of 4 independent accumulators: a warp issues one a
// cycle, so executed code costs ~kSegments * kRun cycles warm, and the cold
// excess over that is the fetch. The shapes (kCodeShapes): straight runs of
// 1 to 64 KB, and 4 KB executed over a 68 KB span in 4 or 16 pieces.
// code_fetch_evict: 128 KB of other straight code on every SM, to push a
// kernel's code out of the SMs' instruction caches as well as out of L2.
#include <ATen/cuda/CUDAContext.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <cstdint>

#include "common/device_info.h"
#include "probe/probe_checks.h"
#include "probe/probe_device.h"

namespace memopt {
namespace {

constexpr int kCodeThreads = 128;

// kInstructions FADDs, 4 independent chains: ptxas cannot merge them (IEEE
// adds do not reassociate) nor drop them (the sum is stored).
template <int kInstructions>
__device__ __forceinline__ void run_code(float (&a)[4], float step) {
  static_assert(kInstructions % 4 == 0, "whole rounds of the 4 chains");
#pragma unroll
  for (int i = 0; i < kInstructions / 4; ++i) {
    asm volatile(
        "add.f32 %0, %0, %4;\n\t"
        "add.f32 %1, %1, %4;\n\t"
        "add.f32 %2, %2, %4;\n\t"
        "add.f32 %3, %3, %4;"
        : "+f"(a[0]), "+f"(a[1]), "+f"(a[2]), "+f"(a[3])
        : "f"(step));
  }
}

template <int kSegments, int kRun, int kGap>
__global__ void __launch_bounds__(kCodeThreads)
    code_shape_kernel(float* __restrict__ out, float step, int take_gaps) {
  float a[4] = {static_cast<float>(threadIdx.x), 1.f, 2.f, 3.f};
#pragma unroll
  for (int s = 0; s < kSegments; ++s) {
    run_code<kRun>(a, step);
    if constexpr (kGap > 0) {
      if (take_gaps != 0) run_code<kGap>(a, step);
    }
  }
  out[blockIdx.x * kCodeThreads + threadIdx.x] = a[0] + a[1] + a[2] + a[3];
}

struct CodeShape {
  int segments, run, gap;  // instructions
  void (*kernel)(float*, float, int);
};

// Instruction counts: 64 = 1 KB of SASS.
constexpr CodeShape kCodeShapes[] = {
    {1, 64, 0, code_shape_kernel<1, 64, 0>},          // 1 KB straight
    {1, 256, 0, code_shape_kernel<1, 256, 0>},        // 4 KB straight
    {1, 1024, 0, code_shape_kernel<1, 1024, 0>},      // 16 KB straight
    {1, 4096, 0, code_shape_kernel<1, 4096, 0>},      // 64 KB straight
    {4, 64, 1024, code_shape_kernel<4, 64, 1024>},    // 4 KB run in 4 pieces, 16 KB gaps
    {16, 16, 256, code_shape_kernel<16, 16, 256>},    // 4 KB run in 16 pieces, 4 KB gaps
};
constexpr int kCodeShapeCount = static_cast<int>(sizeof(kCodeShapes) / sizeof(kCodeShapes[0]));

// The evictor: 128 KB of straight code, its own kernel.
constexpr auto kEvictKernel = code_shape_kernel<1, 8192, 0>;

void check_out(const char* op, const at::Tensor& out, int64_t needed) {
  probe::check_float_cuda(op, "out", out);
  TORCH_CHECK(out.numel() >= needed, "memopt_probe::", op, ": expected out to have at least ",
              needed, " elements, got ", out.numel());
}

void code_fetch(int64_t shape, at::Tensor& out) {
  TORCH_CHECK(shape >= 0 && shape < kCodeShapeCount, "memopt_probe::code_fetch: expected shape in [0, ",
              kCodeShapeCount, "), got ", shape);
  check_out("code_fetch", out, kCodeThreads);
  const c10::cuda::CUDAGuard device_guard(out.device());
  kCodeShapes[shape].kernel<<<1, kCodeThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      out.mutable_data_ptr<float>(), 1.f, 0);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

void code_fetch_evict(at::Tensor& out) {
  const c10::cuda::CUDAGuard device_guard(out.device());
  // Every SM at least once: 4 blocks an SM, more than the block scheduler
  // needs to reach each of them.
  const int64_t blocks = 4 * int64_t{sm_count()};
  check_out("code_fetch_evict", out, blocks * kCodeThreads);
  kEvictKernel<<<static_cast<unsigned>(blocks), kCodeThreads, 0,
                 at::cuda::getCurrentCUDAStream()>>>(out.mutable_data_ptr<float>(), 1.f, 0);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// int64 [shapes, 3]: each shape's (segments, run, gap) in instructions.
at::Tensor code_fetch_shapes() {
  at::Tensor t = at::empty({kCodeShapeCount, 3}, at::TensorOptions().dtype(at::kLong));
  auto* p = t.mutable_data_ptr<int64_t>();
  for (int i = 0; i < kCodeShapeCount; ++i) {
    p[3 * i] = kCodeShapes[i].segments;
    p[3 * i + 1] = kCodeShapes[i].run;
    p[3 * i + 2] = kCodeShapes[i].gap;
  }
  return t;
}

}  // namespace

TORCH_LIBRARY_IMPL(memopt_probe, CompositeExplicitAutograd, m) {
  m.impl("code_fetch_shapes", &code_fetch_shapes);
}

TORCH_LIBRARY_IMPL(memopt_probe, CUDA, m) {
  m.impl("code_fetch", &code_fetch);
  m.impl("code_fetch_evict", &code_fetch_evict);
}

}  // namespace memopt
