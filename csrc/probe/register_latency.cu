// Probe 1, the register rung of the latency staircase: how many cycles a result
// takes to come back from the FMA pipe into a register the next instruction
// reads. One thread runs a chain of dependent FFMAs (x = x * a + b, each needing
// the last), timed with clock_cycles() around the chain: cycles / steps is the
// dependent-issue latency of a register operand (the source claims ~1 cycle;
// Hopper's published FFMA latency is 4 cycles, so we expect ~4: the source's
// figure is the register file's access, not a dependent chain's, which no
// kernel can time alone).
//
// Measured (H200, 2026-11-30, benchmarks/results/probe_h200.json): 4.12 cycles
// a step (4.1 predicted), Hopper's dependent-FFMA latency of 4 plus the loop's
// share. The first runs, 8 FFMAs a branch, read 5.0: the SASS (cuobjdump) is
// the dependent FFMAs, then ISETP + BRA back, and one warp alone has nothing
// to issue while the taken branch redirects: 8 x 4 + ~8 = 40 cycles an
// iteration. With 64 a branch (kChainUnroll) the branch adds ~0.1 a step.
#include <ATen/cuda/CUDAContext.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <cstdint>

#include "probe/probe_device.h"
#include "probe/probe_timers.cuh"

namespace memopt {
namespace {

using probe::clock_cycles;
using probe::global_ns;

constexpr int kChainUnroll = 64;

// a and b come from the host so the compiler cannot fold the chain.
__global__ void register_chain_kernel(int64_t steps, float a, float b, int64_t* out) {
  float x = static_cast<float>(threadIdx.x) + 1.f;
  const int64_t ns0 = global_ns();
  const int64_t c0 = clock_cycles();
#pragma unroll 1
  for (int64_t i = 0; i < steps; i += kChainUnroll) {
    // kChainUnroll dependent FFMAs an iteration. The compare issues in the
    // chain's shadow, but the taken branch back does not: with 8 an iteration
    // the H200 read 5.0 cycles a step (8 x 4 + ~8 for the branch); with 64 the
    // branch adds ~0.1 a step.
#pragma unroll
    for (int k = 0; k < kChainUnroll; ++k) x = fmaf(x, a, b);
  }
  const int64_t c1 = clock_cycles();
  const int64_t ns1 = global_ns();
  out[0] = c1 - c0;
  out[1] = ns1 - ns0;
  out[2] = static_cast<int64_t>(__float_as_int(x));
}

at::Tensor register_chain(int64_t steps) {
  TORCH_CHECK(steps >= kChainUnroll && steps % kChainUnroll == 0,
              "memopt_probe::register_chain: expected steps to be a positive multiple of ",
              kChainUnroll, ", got ", steps);
  const c10::cuda::CUDAGuard guard(probe::probe_device("register_chain"));
  at::Tensor out = at::empty({3}, at::TensorOptions().dtype(at::kLong).device(at::kCUDA));
  register_chain_kernel<<<1, 1, 0, at::cuda::getCurrentCUDAStream()>>>(
      steps, 0.999f, 0.001f, out.mutable_data_ptr<int64_t>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

}  // namespace

// No tensor argument, so no device for the dispatcher to pick the CUDA kernel by:
// registered for every backend, and the op runs on the current CUDA device.
TORCH_LIBRARY_IMPL(memopt_probe, CompositeExplicitAutograd, m) {
  m.impl("register_chain", &register_chain);
}

}  // namespace memopt
