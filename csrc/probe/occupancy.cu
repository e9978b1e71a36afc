// Probe 7, registers and occupancy: one compute-bound kernel built four times
// with register caps of 32, 64, 128 and 255 a thread, run with a chosen block
// size and a chosen amount of dynamic shared memory that exists only to hold
// blocks off the SM. The source material's claim: occupancy (resident warps
// against the SM's 64) hides latency, but more of it stops paying at some
// point, and buying it with a register cap that forces spills costs more than
// it gains.
//
// The body: each element x = input[i] seeds kAccumulators = 48 accumulators,
// then kRounds = 64 rounds of acc[j] = acc[j] * 0.25 + acc[j + 1] (the last
// takes acc[0] of the round before), and out[i] is their sum: 3072 FFMAs per
// 8 bytes of global traffic, so the FMA pipe, not memory, binds. Each round
// needs every accumulator of the round before, so no schedule can keep fewer
// than 48 values live; within a round the 48 FFMAs are independent, so one
// warp alone has 48-deep instruction-level parallelism against the FFMA's
// 4-cycle latency: a few warps a scheduler should already saturate the pipe,
// which is where extra occupancy should stop paying.
//
// Registers (ptxas -v, sm_90a): cap 32 uses 32 with a 344-byte stack frame
// (760 B of spill stores, 764 B of spill loads in the code); its 4-round loop
// holds 149 LDL and 145 STL beside its 192 FFMAs, so most FFMAs wait
// on a reload from L1 (78% of them): twice the resident warps of the uncapped build, bought
// with ~1.5 local accesses an FMA. Cap 64 uses 56 registers, caps 128 and 255
// both 59, none spilling: a cap is a ceiling, and ptxas takes only what the
// body needs (3 more when allowed). In warps an SM: 32
// registers allow 64, 56 allow 36, 59 (allocated as 64) allow 32. Lower
// occupancy than that is set with block and smem_bytes.
//
// The cap is CUDA 12.4's __maxnreg__(N) kernel attribute, an exact ceiling;
// __launch_bounds__(threads, min_blocks) could only imply caps of 65536 /
// (threads * min_blocks), and nvcc refuses the two together.
//
// Measured (H200, 2026-11-30, benchmarks/results/probe_h200.json), 256-thread
// blocks: cap 128 (59 registers) 1.788 ms at 32 warps an SM, 1.845 ms at 16;
// caps 64 (56 registers) / 255 the same within 2%; cap 32 (344 B spilled)
// 35.9 ms at 64 warps: occupancy past 16 warps bought 3%, spills cost 20x.
#include <ATen/cuda/CUDAContext.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdint>

#include "common/cuda_launch.cuh"
#include "common/device_info.h"
#include "probe/probe_checks.h"
#include "probe/probe_device.h"

namespace memopt {
namespace {

constexpr int kAccumulators = 48;
constexpr int kRounds = 64;
constexpr float kDecay = 0.25f;  // keeps |acc| growth at 1.25x a round: no inf in 64 rounds
constexpr int kDefaultSmemBytes = 48 * 1024;  // a block's dynamic smem without the opt-in
constexpr int kMaxSmemBytes = 227 * 1024;     // Hopper's opt-in limit a block

template <int kCap>
__global__ void __maxnreg__(kCap)
    fma_chain_kernel(const float* __restrict__ input, float* __restrict__ out, int64_t n,
                     int smem_bytes) {
  // The dynamic shared memory only limits how many blocks fit an SM; one
  // volatile store a block keeps the allocation from being a pure launch
  // parameter that a reader might suspect the compiler dropped.
  extern __shared__ float smem[];
  if (threadIdx.x == 0 && smem_bytes >= static_cast<int>(sizeof(float))) {
    static_cast<volatile float*>(smem)[0] = static_cast<float>(blockIdx.x);
  }
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const float x = input[i];
    float acc[kAccumulators];
#pragma unroll
    for (int j = 0; j < kAccumulators; ++j) acc[j] = x + static_cast<float>(j);
    // 4 rounds an iteration: 192 FFMAs of straight code (3 KB) amortize the
    // loop branch without a 49 KB fully unrolled body that would stream
    // through the instruction cache.
#pragma unroll 4
    for (int r = 0; r < kRounds; ++r) {
      const float first = acc[0];
#pragma unroll
      for (int j = 0; j < kAccumulators - 1; ++j) acc[j] = fmaf(acc[j], kDecay, acc[j + 1]);
      acc[kAccumulators - 1] = fmaf(acc[kAccumulators - 1], kDecay, first);
    }
    float sum = 0.f;
#pragma unroll
    for (int j = 0; j < kAccumulators; ++j) sum += acc[j];
    out[i] = sum;
  }
}

using FmaChainKernel = void (*)(const float*, float*, int64_t, int);

void check_occupancy_config(const char* op, int64_t cap, int64_t block, int64_t smem_bytes) {
  TORCH_CHECK(cap == 32 || cap == 64 || cap == 128 || cap == 255, "memopt_probe::", op,
              ": expected cap to be 32, 64, 128 or 255 (registers a thread), got ", cap);
  TORCH_CHECK(block >= 32 && block <= 1024 && block % 32 == 0, "memopt_probe::", op,
              ": expected block to be a multiple of 32 in [32, 1024], got ", block);
  TORCH_CHECK(smem_bytes >= 0 && smem_bytes <= kMaxSmemBytes, "memopt_probe::", op,
              ": expected smem_bytes in [0, ", kMaxSmemBytes, "] (227 KB), got ", smem_bytes);
}

// The instantiation for `cap`, its dynamic shared memory limit raised to
// smem_bytes when that passes the default 48 KB (on the current device, whose
// own limit is checked here: 227 KB is Hopper's, older GPUs have less).
FmaChainKernel prepare_kernel(const char* op, int64_t cap, int64_t smem_bytes) {
  const int optin = static_cast<int>(at::cuda::getCurrentDeviceProperties()->sharedMemPerBlockOptin);
  TORCH_CHECK(smem_bytes <= optin, "memopt_probe::", op, ": expected smem_bytes at most ", optin,
              " (this device's shared memory a block), got ", smem_bytes);
  const FmaChainKernel kernel = cap == 32    ? fma_chain_kernel<32>
                                : cap == 64  ? fma_chain_kernel<64>
                                : cap == 128 ? fma_chain_kernel<128>
                                             : fma_chain_kernel<255>;
  if (smem_bytes > kDefaultSmemBytes) {
    C10_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(smem_bytes)));
  }
  return kernel;
}

// Blocks of `block` threads with smem_bytes each that fit one SM at once
// (0 when the block is larger than the kernel's registers allow).
int active_blocks_per_sm(FmaChainKernel kernel, const cudaFuncAttributes& attr, int64_t block,
                         int64_t smem_bytes) {
  if (block > attr.maxThreadsPerBlock) return 0;
  int blocks = 0;
  C10_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks, kernel, static_cast<int>(block), static_cast<size_t>(smem_bytes)));
  return blocks;
}

void occupancy_run(const at::Tensor& input, at::Tensor& out, int64_t cap, int64_t block,
                   int64_t smem_bytes) {
  probe::check_input_and_out("occupancy_run", input, out);
  check_occupancy_config("occupancy_run", cap, block, smem_bytes);
  const int64_t n = input.numel();
  if (n == 0) return;
  const c10::cuda::CUDAGuard device_guard(input.device());
  const FmaChainKernel kernel = prepare_kernel("occupancy_run", cap, smem_bytes);
  cudaFuncAttributes attr{};
  C10_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  const int per_sm = active_blocks_per_sm(kernel, attr, block, smem_bytes);
  TORCH_CHECK(per_sm > 0, "memopt_probe::occupancy_run: expected a block of ", block,
              " threads with ", smem_bytes, " bytes of shared memory to fit an SM (cap ", cap,
              ": ", attr.numRegs, " registers a thread, at most ", attr.maxThreadsPerBlock,
              " threads a block), got 0 resident blocks");
  // One full wave at the occupancy under test, the grid-stride loop doing the
  // rest: a larger grid would only queue more waves of the same occupancy.
  const int64_t blocks = std::min<int64_t>(ceil_div<int64_t>(n, block),
                                           static_cast<int64_t>(per_sm) * sm_count());
  kernel<<<static_cast<unsigned>(blocks), static_cast<unsigned>(block),
           static_cast<size_t>(smem_bytes), at::cuda::getCurrentCUDAStream()>>>(
      input.const_data_ptr<float>(), out.mutable_data_ptr<float>(), n,
      static_cast<int>(smem_bytes));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// int64 [4] on the CPU: registers a thread, local bytes a thread (spills),
// resident blocks an SM, max threads a block, for the `cap` instantiation on
// the current device.
at::Tensor occupancy_info(int64_t cap, int64_t block, int64_t smem_bytes) {
  check_occupancy_config("occupancy_info", cap, block, smem_bytes);
  const c10::cuda::CUDAGuard device_guard(probe::probe_device("occupancy_info"));
  const FmaChainKernel kernel = prepare_kernel("occupancy_info", cap, smem_bytes);
  cudaFuncAttributes attr{};
  C10_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  at::Tensor info = at::empty({4}, at::TensorOptions().dtype(at::kLong));
  int64_t* v = info.mutable_data_ptr<int64_t>();
  v[0] = attr.numRegs;
  v[1] = static_cast<int64_t>(attr.localSizeBytes);
  v[2] = active_blocks_per_sm(kernel, attr, block, smem_bytes);
  v[3] = attr.maxThreadsPerBlock;
  return info;
}

}  // namespace

// occupancy_info takes no tensor, so the dispatcher has no device key to
// route it by: a CUDA-only kernel would fail with "There were no tensor
// arguments to this function". CompositeExplicitAutograd is the slot it
// falls back to.
TORCH_LIBRARY_IMPL(memopt_probe, CompositeExplicitAutograd, m) {
  m.impl("occupancy_info", &occupancy_info);
}

TORCH_LIBRARY_IMPL(memopt_probe, CUDA, m) { m.impl("occupancy_run", &occupancy_run); }

}  // namespace memopt
