// Probe 1, the cache rungs of the latency staircase: how many cycles one load
// takes to come back, by where its line lives (L1, L2 or HBM). One thread
// follows chain[] (a random cyclic permutation of [0, n), built by the driver):
// idx = chain[idx], each load's address being the previous load's value, so no
// two loads overlap and cycles / steps is the latency of one trip. The working
// set n * 4 bytes picks the rung: below L1 (up to 256 KB an SM, less what the
// carveout gives shared memory) every step hits L1; below L2 (50 MB on the
// H200) it misses L1 and hits L2; past that it goes to HBM, and past the TLB's
// reach it pays page walks too.
//
// The claim it tests (the source material): register ~1 cycle, shared memory
// ~20-30, L1 ~30, L2 ~200, global memory 400-800 cycles. Published Hopper
// microbenchmarks put L1 near 30-40, L2 at 200-300 (more for the far partition)
// and HBM near 500-700, so we expect the staircase's shape with L2 above 200.
//
// Why the kernel is shaped so:
// - One thread, one block: any second warp would share the load pipe and the
//   caches and its loads would overlap ours; latency is a one-request figure.
// - Dependent loads through a plain `const int*` (no __restrict__, no __ldg):
//   the default-cached ld.global, which allocates in L1, as ordinary code reads.
//   A random permutation defeats the prefetch and coalescing a stride would get.
// - Each step is IMAD.WIDE.U32 (base + 4 * idx) then LDG: the figure includes the
//   ~4 cycles of address arithmetic, since the chain holds indices (the schema).
// - Warm-up steps first, untimed: cold misses and TLB fills stay out of the
//   figure (warmup >= n walks the whole cycle once).
// - Timers: %globaltimer (ns) outside clock64 (cycles). Both reads are asm
//   volatile with a memory clobber, so the compiler keeps them where written;
//   the final index is stored before the clocks stop, so the last load's
//   latency is inside the window (the store must wait for its value). The
//   globaltimer ticks in ~1 us steps on some GPUs: time >= 100 us of chase.
// - The op trusts chain to hold indices in [0, n): checking that would take a
//   device sync here or a bounds test in every timed step.
//
// Measured (H200, 2026-11-30, benchmarks/results/probe_h200.json): 40 cycles
// (20 ns) to 128 KB (L1), 267-286 from 1 to 16 MB (L2), rising from 32 MB, and
// 663-672 cycles (335-339 ns) from 1 GB (HBM).
#include <ATen/cuda/CUDAContext.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <cstdint>

#include "common/dtype_names.h"
#include "probe/probe_timers.cuh"

namespace memopt {
namespace {

using probe::clock_cycles;
using probe::global_ns;

// `steps` dependent loads from `idx`: each address is the previous load's value.
// Not unrolled: unrolled by 16, the compiler computed some steps' addresses
// with LEA + LEA.HI.X + SHF instead of one IMAD.WIDE, so steps cost unequal
// cycles. Rolled, every step is IMAD.WIDE.U32 + LDG, and the counter's add,
// compare and branch do not depend on the load, so they issue while it is in
// flight. The index is unsigned so that no sign extension joins the chain.
__device__ __forceinline__ uint32_t follow_chain(const int* chain, uint32_t idx, int64_t steps) {
#pragma unroll 1
  for (int64_t step = 0; step < steps; ++step) idx = static_cast<uint32_t>(chain[idx]);
  return idx;
}

// idx as it is, through a move the compiler cannot see into: without it, the
// int64 store of the final index made the compiler carry idx zero-extended
// through the timed loop, and each step's address took LEA + LEA.HI.X (two
// dependent instructions) instead of IMAD.WIDE.U32. ptxas drops the move.
__device__ __forceinline__ uint32_t opaque(uint32_t idx) {
  uint32_t same;
  asm("mov.b32 %0, %1;" : "=r"(same) : "r"(idx));
  return same;
}

// out: (cycles, ns, final index) of the timed `steps`.
__global__ void pointer_chase_kernel(const int* chain, int64_t steps, int64_t warmup,
                                     int64_t* out) {
  uint32_t idx = follow_chain(chain, 0, warmup);
  const int64_t ns_start = global_ns();
  const int64_t cycles_start = clock_cycles();
  idx = opaque(follow_chain(chain, idx, steps));
  out[2] = idx;
  const int64_t cycles_end = clock_cycles();
  const int64_t ns_end = global_ns();
  out[0] = cycles_end - cycles_start;
  out[1] = ns_end - ns_start;
}

void check_pointer_chase_inputs(const at::Tensor& chain, int64_t steps, int64_t warmup) {
  TORCH_CHECK_VALUE(chain.defined(), "memopt_probe::pointer_chase: expected chain to be a ",
                    "tensor, got an undefined tensor");
  TORCH_CHECK_TYPE(chain.scalar_type() == at::kInt,
                   "memopt_probe::pointer_chase: expected chain to have dtype int32, got ",
                   dtype_name(chain.scalar_type()));
  TORCH_CHECK(chain.is_cuda(), "memopt_probe::pointer_chase: expected chain on a CUDA device, got ",
              chain.device());
  TORCH_CHECK(chain.dim() == 1,
              "memopt_probe::pointer_chase: expected chain to be a 1-D tensor, got ", chain.dim(),
              "-D");
  TORCH_CHECK(chain.is_contiguous(),
              "memopt_probe::pointer_chase: expected chain to be contiguous, got strides ",
              chain.strides());
  TORCH_CHECK(chain.numel() >= 1,
              "memopt_probe::pointer_chase: expected chain to hold at least 1 index, got 0");
  TORCH_CHECK(steps >= 1, "memopt_probe::pointer_chase: expected steps >= 1, got ", steps);
  TORCH_CHECK(warmup >= 0, "memopt_probe::pointer_chase: expected warmup >= 0, got ", warmup);
}

at::Tensor pointer_chase(const at::Tensor& chain, int64_t steps, int64_t warmup) {
  check_pointer_chase_inputs(chain, steps, warmup);
  const c10::cuda::CUDAGuard guard(chain.device());
  at::Tensor out = at::empty({3}, chain.options().dtype(at::kLong));
  pointer_chase_kernel<<<1, 1, 0, at::cuda::getCurrentCUDAStream()>>>(
      chain.const_data_ptr<int>(), steps, warmup, out.mutable_data_ptr<int64_t>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(memopt_probe, CUDA, m) { m.impl("pointer_chase", &pointer_chase); }

}  // namespace memopt
