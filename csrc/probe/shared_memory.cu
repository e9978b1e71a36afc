// Probe 2, shared memory: its latency, its bandwidth with and without bank
// conflicts, and the padded-tile fix for the column walk that conflicts.
//
// The claims it tests (the source material): shared memory answers in ~20-30
// cycles; its bandwidth is ~19 TB/s chip-wide; a warp whose 32 lanes hit 32
// different words of one bank is served one word at a time (32-way conflict),
// and padding a 32x32 tile's rows to 33 words removes the conflict of reading
// it by columns. The 19 TB/s is an A100's (32 banks x 4 B x 108 SMs x
// 1.41 GHz); the H200's 132 SMs at 1.98 GHz give 33 TB/s by the same
// arithmetic, so that is the ceiling we expect smem_read to approach.
//
// smem_latency: the pointer chase of probe 1 inside shared memory. One thread,
// for the reason of probe 1 (any second warp would overlap its loads with
// ours). The block's threads build the chain first; the chain holds each next
// entry's 32-bit shared-window address, so a step is one LDS whose address is
// the previous LDS's result, with no index arithmetic in between (probe 1's
// chain of indices pays an IMAD.WIDE a step; here that would be a shift and an
// add, ~4-8 cycles on a ~30-cycle figure).
//
// smem_read: 1024 threads a block; lane l of every warp reads word
// (l * stride) % 1024 + 32 * (k % 32) at iteration k. Adding a multiple of 32
// words moves every lane by the same whole number of bank rows, so which lanes
// share a bank, and which share a word, is the same at every k: stride s <= 32
// puts gcd(s, 32) lanes on distinct words of one bank (1: conflict-free; 2:
// 2-way; 32: 32-way), stride 0 puts all 32 on one word (a broadcast, one
// wavefront). Strides past 32 wrap modulo 1024 and some lanes then share words
// (64: 16 distinct words in bank 0, 16-way). The 32 offsets take the buffer to
// 1024 + 31 * 32 words, so 2048 words (8 KB) hold it without a wrap, and each
// read is an LDS at an immediate offset from one address register: 2
// instructions (LDS, FADD) a 128-byte warp read, so instruction issue (4 a clock
// an SM) does not cap the one warp read a clock the 32 banks serve.
//
// smem_tile_columns: 8 warps a block, each owning a 32x32 float tile. Lane i
// reads row i, column c for c = 0..31: unpadded, word i * 32 + c is in bank c
// for every lane (32-way); padded, word i * 33 + c is in bank (i + c) % 32, a
// different bank a lane (conflict-free).
//
// Both bandwidth kernels read through a volatile pointer: every read is then
// emitted, in program order, as its own 4-byte LDS. Without it nvcc 13.0
// loaded each tile row once, before the sweep loop (the words are the same
// every sweep), and read the unpadded rows as 8 LDS.128: a different access
// pattern from the one to be measured, and only once.
// Four accumulators a thread, so a thread's reads do not wait on one FADD chain.
// The timed kernel includes filling the shared buffer: 2 stores a thread
// against iters reads (0.8% at iters = 256), or 32 a tile lane against
// 32 x iters.
//
// Measured (H200, 2026-11-30, benchmarks/results/probe_h200.json): latency 39
// cycles (19.7 ns); 27.4 TB/s chip-wide (208 GB/s an SM) at stride 1; stride
// 2 / 4 / 8 / 16 / 32 at 15.0 / 7.8 / 4.0 / 2.1 / 1.0 TB/s (26.9x slower at
// 32); broadcast 26.2 TB/s; the 32x32 tile by columns 30.5x slower than 32x33.
#include <ATen/cuda/CUDAContext.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <cstdint>
#include <limits>
#include <numeric>

#include "common/dtype_names.h"
#include "probe/probe_device.h"
#include "probe/probe_timers.cuh"

namespace memopt {
namespace {

constexpr int kWarpSize = 32;
constexpr int kBanks = 32;

// ------------------------------------------------------------ smem_latency ---

// 48 KB of int32: the dynamic shared memory a block gets without an opt-in.
constexpr int64_t kSmemChainMaxEntries = 48 * 1024 / 4;
constexpr int kChainBuildThreads = 256;

using probe::clock_cycles;
using probe::global_ns;

// One LDS at a shared-window address. asm volatile so it stays between the
// timer reads (the compiler may not move it across another volatile asm).
__device__ __forceinline__ uint32_t load_shared_u32(uint32_t address) {
  uint32_t value;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(value) : "r"(address));
  return value;
}

// Entry i of the chain holds the address of entry (i + stride) % n; stride is
// coprime to n, so the chain is one cycle through all n entries.
__global__ void __launch_bounds__(kChainBuildThreads)
    smem_chase_kernel(int n, int stride, int64_t steps, int64_t* out) {
  extern __shared__ uint32_t chain[];  // [n]
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(chain));
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    chain[i] = base + 4u * static_cast<uint32_t>((i + stride) % n);
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  uint32_t address = base;
  const int64_t ns_start = global_ns();
  const int64_t cycles_start = clock_cycles();
#pragma unroll 1
  for (int64_t step = 0; step < steps; ++step) address = load_shared_u32(address);
  // Stored before the clocks stop: the store waits for the last load's value.
  out[2] = (address - base) / 4;
  const int64_t cycles_end = clock_cycles();
  const int64_t ns_end = global_ns();
  out[0] = cycles_end - cycles_start;
  out[1] = ns_end - ns_start;
}

// A chain stride of at least 33 words coprime to n. Shared memory has no cache
// or prefetcher, so the order should not matter; a non-unit stride keeps the
// chase from being a sequential walk in case something does notice one.
int64_t chain_stride(int64_t n) {
  int64_t stride = 33;
  while (std::gcd(stride, n) != 1) ++stride;
  return stride;
}

void check_smem_latency_inputs(int64_t n, int64_t steps) {
  TORCH_CHECK(n >= 2 && n <= kSmemChainMaxEntries,
              "memopt_probe::smem_latency: expected n in [2, ", kSmemChainMaxEntries,
              "] (n * 4 bytes within the 48 KB of shared memory a block gets), got ", n);
  TORCH_CHECK(steps >= 1, "memopt_probe::smem_latency: expected steps >= 1, got ", steps);
  TORCH_CHECK(c10::cuda::device_count() > 0,
              "memopt_probe::smem_latency: expected a CUDA device, found none");
}

at::Tensor smem_latency(int64_t n, int64_t steps) {
  check_smem_latency_inputs(n, steps);
  const c10::cuda::CUDAGuard guard(probe::probe_device("smem_latency"));
  at::Tensor out = at::empty(
      {3}, at::TensorOptions().dtype(at::kLong).device(at::kCUDA, c10::cuda::current_device()));
  smem_chase_kernel<<<1, kChainBuildThreads, static_cast<size_t>(n) * 4,
                      at::cuda::getCurrentCUDAStream()>>>(
      static_cast<int>(n), static_cast<int>(chain_stride(n)), steps,
      out.mutable_data_ptr<int64_t>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

// ------------------------------------------------------- bandwidth kernels ---

constexpr int kAccumulators = 4;

// The pattern's span: lane l starts at word (l * stride) % kSmemReadSpan.
constexpr int kSmemReadSpan = 1024;
constexpr int kSmemReadThreads = 1024;
// Iteration k adds 32 * (k % 32) words; the last offset, 31 * 32, ends at
// 1024 + 992 words, inside 2048.
constexpr int kSmemReadOffsets = 32;
constexpr int kSmemReadBufferWords = 2048;
static_assert(kSmemReadSpan + (kSmemReadOffsets - 1) * kBanks <= kSmemReadBufferWords);

// The four partial sums of a thread, added.
__device__ __forceinline__ float total(const float (&sums)[kAccumulators]) {
  return (sums[0] + sums[1]) + (sums[2] + sums[3]);
}

__global__ void __launch_bounds__(kSmemReadThreads)
    smem_read_kernel(int stride, int64_t iters, float* out) {
  __shared__ float words[kSmemReadBufferWords];
  for (int w = threadIdx.x; w < kSmemReadBufferWords; w += blockDim.x) {
    words[w] = static_cast<float>(w);
  }
  __syncthreads();
  const int lane = threadIdx.x % kWarpSize;
  const volatile float* first = words + (lane * stride) % kSmemReadSpan;
  float sums[kAccumulators] = {};
  int64_t k = 0;
  for (; k + kSmemReadOffsets <= iters; k += kSmemReadOffsets) {
#pragma unroll
    for (int j = 0; j < kSmemReadOffsets; ++j) sums[j % kAccumulators] += first[j * kBanks];
  }
  for (int j = 0; k < iters; ++k, ++j) sums[0] += first[j * kBanks];
  out[static_cast<int64_t>(blockIdx.x) * kSmemReadThreads + threadIdx.x] = total(sums);
}

// 8 tiles of 32 x 33 floats are 33,792 bytes of static shared memory, under
// the 48 KB static limit; 32 warps' tiles (a 1024-thread block) would need 135 KB.
constexpr int kTileWarps = 8;
constexpr int kTileThreads = kTileWarps * kWarpSize;
constexpr int kTileSide = 32;
constexpr int kPaddedRowWords = kTileSide + 1;

// Both layouts allocate the padded size, so both run at the same occupancy (6
// blocks, 48 warps an SM: a 7th block's 33 KB would pass the 227 KB of shared
// memory an H200 SM gives blocks) and the layout is the only difference.
template <bool kPadded>
__global__ void __launch_bounds__(kTileThreads)
    smem_tile_columns_kernel(int64_t iters, float* out) {
  __shared__ float tiles[kTileWarps][kTileSide * kPaddedRowWords];
  constexpr int kRowWords = kPadded ? kPaddedRowWords : kTileSide;
  const int lane = threadIdx.x % kWarpSize;
  float* tile = tiles[threadIdx.x / kWarpSize];
  // Filled by rows: a warp writes 32 consecutive words, conflict-free in both layouts.
  for (int row = 0; row < kTileSide; ++row) {
    tile[row * kRowWords + lane] = static_cast<float>(row * kTileSide + lane);
  }
  __syncwarp();
  const volatile float* my_row = tile + lane * kRowWords;
  float sums[kAccumulators] = {};
  for (int64_t sweep = 0; sweep < iters; ++sweep) {
#pragma unroll
    for (int column = 0; column < kTileSide; ++column) {
      sums[column % kAccumulators] += my_row[column];
    }
  }
  out[static_cast<int64_t>(blockIdx.x) * kTileThreads + threadIdx.x] = total(sums);
}

// blocks, iters and out of the two bandwidth probes; out holds one float a thread.
void check_bandwidth_inputs(const char* op, int64_t blocks, int64_t iters, const at::Tensor& out,
                            int64_t threads_per_block) {
  TORCH_CHECK(blocks >= 1 && blocks <= std::numeric_limits<int32_t>::max(), "memopt_probe::", op,
              ": expected blocks in [1, 2^31 - 1], got ", blocks);
  TORCH_CHECK(iters >= 1, "memopt_probe::", op, ": expected iters >= 1, got ", iters);
  TORCH_CHECK_VALUE(out.defined(), "memopt_probe::", op,
                    ": expected out to be a tensor, got an undefined tensor");
  TORCH_CHECK_TYPE(out.scalar_type() == at::kFloat, "memopt_probe::", op,
                   ": expected out to have dtype float32, got ", dtype_name(out.scalar_type()));
  TORCH_CHECK(out.is_cuda(), "memopt_probe::", op, ": expected out on a CUDA device, got ",
              out.device());
  TORCH_CHECK(out.is_contiguous(), "memopt_probe::", op,
              ": expected out to be contiguous, got strides ", out.strides());
  TORCH_CHECK(out.numel() >= blocks * threads_per_block, "memopt_probe::", op,
              ": expected out to hold at least blocks * ", threads_per_block, " = ",
              blocks * threads_per_block, " floats (one a thread), got ", out.numel());
}

void smem_read(int64_t blocks, int64_t stride, int64_t iters, const at::Tensor& out) {
  check_bandwidth_inputs("smem_read", blocks, iters, out, kSmemReadThreads);
  TORCH_CHECK(stride >= 0 && stride <= kSmemReadSpan,
              "memopt_probe::smem_read: expected stride in [0, ", kSmemReadSpan, "], got ", stride);
  const c10::cuda::CUDAGuard guard(out.device());
  smem_read_kernel<<<static_cast<unsigned>(blocks), kSmemReadThreads, 0,
                     at::cuda::getCurrentCUDAStream()>>>(static_cast<int>(stride), iters,
                                                         out.mutable_data_ptr<float>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

void smem_tile_columns(int64_t blocks, bool padded, int64_t iters, const at::Tensor& out) {
  check_bandwidth_inputs("smem_tile_columns", blocks, iters, out, kTileThreads);
  const c10::cuda::CUDAGuard guard(out.device());
  const auto kernel = padded ? smem_tile_columns_kernel<true> : smem_tile_columns_kernel<false>;
  kernel<<<static_cast<unsigned>(blocks), kTileThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      iters, out.mutable_data_ptr<float>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

TORCH_LIBRARY_IMPL(memopt_probe, CUDA, m) {
  m.impl("smem_read", &smem_read);
  m.impl("smem_tile_columns", &smem_tile_columns);
}

// smem_latency takes no tensor, so the dispatcher has no device to pick the
// CUDA key by: registered under CUDA it fails with "There were no tensor
// arguments to this function". CompositeExplicitAutograd is the key that such
// ops are found under; the op itself checks for a CUDA device.
TORCH_LIBRARY_IMPL(memopt_probe, CompositeExplicitAutograd, m) {
  m.impl("smem_latency", &smem_latency);
}

}  // namespace memopt
