// Probe 5, the constant cache: what a __constant__ read costs when every lane
// of a warp reads the same address, against when each lane reads its own, and
// against the same per-lane reads from global memory. The source material
// claims a broadcast constant read is about as fast as a register, while
// divergent constant reads serialize (one address at a time) and lose to
// global memory. Our case study (benchmarks/constant_memory/case_study.cu)
// saw both inside LayerNorm; this probe isolates them.
//
// The op copies `table` into c_table, then each of `threads` threads reads
// `iters` entries and writes their sum to out[t]:
//
//   mode 0  c_table[k % size]: the address depends on the iteration k alone,
//           one address a warp, the broadcast case. The compiler sees the
//           index is warp-uniform and emits ULDC c[0x3][UR] (the uniform
//           datapath: one load a warp by construction).
//   mode 1  c_table[idx(lane, k)]: LDC c[0x3][R] with 32 distinct addresses a
//           warp-wide read, which the constant cache serves one at a time.
//   mode 2  table[idx(lane, k)] in global memory through __ldg
//           (LDG.E.CONSTANT, the read-only path).
//   mode 3  the same with plain loads (LDG.E).
//
// idx(lane, k) = (lane * kLaneSpread + 32 k) % size. kLaneSpread is a prime
// above kCapacity: lanes l and m collide only if size divides (l - m) *
// kLaneSpread, so only if size divides l - m, which is below 32 <= size. A
// warp reads 32 distinct entries for every table size. kLaneSpread is 97 mod
// every power of two from 128 to 16384: lanes 97 floats (388 B) apart, no two
// in one 256-byte span, so in different lines of the constant cache and of L1
// alike. That makes modes 2 and 3 uncoalesced too (32 sectors a request): the
// divergent modes compare 32 constant-cache passes with 32 L1 sector lookups
// for the same 32 addresses. The lane-consecutive pattern of a weight vector
// (32 entries in one 128 B line, coalesced for global) is the case study's.
//
// The index advances by one add and a conditional subtract (no % in the
// loop: an integer division, ~20 instructions, would cost more than the read
// under test). The loop is unrolled 8 deep so 8 reads can be in flight before
// their sum needs them. The index upkeep is ~5 integer instructions a read
// in every mode (in SASS; uniform-datapath ones in mode 0), each taking an
// issue slot, so mode 0 measures that floor plus the load and the FADD.
//
// Timing: the symbol copy runs in every mode (at most 64 KB device to device,
// a few us), so the four modes carry the same overhead; iters should make the
// reads dominate (threads * iters * 4 bytes of reads).
//
// Measured (H200, 2026-11-30, benchmarks/results/probe_h200.json): broadcast
// 0.127 ms, divergent constant 25.2 ms (65x), __ldg 0.395 ms, plain loads
// 0.390 ms: __ldg buys nothing here (plain loads are cached in L1 too).
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <cstdint>
#include <limits>

#include "common/cuda_launch.cuh"
#include "common/dtype_names.h"

namespace memopt {
namespace {

// 16384 floats = 64 KB, the whole user constant bank (c[0x3]) a module may
// have. It fits: without -rdc each .cu file is its own module, c_table is the
// only __constant__ of this one (the ELF's .nv.constant3 is 65536 bytes), and
// kernel parameters and the compiler's literals live in other banks.
constexpr int kCapacity = 16384;
constexpr int kMinEntries = 32;  // one distinct entry per lane
constexpr int kLaneSpread = 16481;  // prime > kCapacity, 16384 + 97
constexpr int kThreads = 256;

__constant__ float c_table[kCapacity];

enum ReadMode : int { kBroadcast = 0, kConstDivergent = 1, kGlobalLdg = 2, kGlobalPlain = 3 };

// `table` is neither const __restrict__ nor is `out`: with both, the compiler
// may prove the table read-only for the kernel and turn mode 3's plain loads
// into LDG.E.CONSTANT, the very path mode 2 asks for with __ldg. Without them
// the store to out may alias the table, so mode 3 stays LDG.E (checked in SASS).
template <int kMode>
__global__ void __launch_bounds__(kThreads)
    constant_read_kernel(const float* table, int size, int64_t threads, int iters, float* out) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (t >= threads) return;
  const int lane = threadIdx.x % 32;
  // The broadcast mode walks the table one entry an iteration; the divergent
  // ones move all 32 lanes 32 entries on, keeping them distinct.
  constexpr int kStep = kMode == kBroadcast ? 1 : 32;
  int idx = kMode == kBroadcast ? 0 : lane * kLaneSpread % size;
  float sum = 0.f;
#pragma unroll 8
  for (int k = 0; k < iters; ++k) {
    if constexpr (kMode == kBroadcast || kMode == kConstDivergent) {
      sum += c_table[idx];
    } else if constexpr (kMode == kGlobalLdg) {
      sum += __ldg(table + idx);
    } else {
      sum += table[idx];
    }
    idx += kStep;
    if (idx >= size) idx -= size;  // size >= 32 >= kStep: one subtract wraps
  }
  out[t] = sum;
}

void check_constant_read_inputs(const at::Tensor& table, int64_t mode, int64_t threads,
                                int64_t iters, const at::Tensor& out) {
  TORCH_CHECK_TYPE(table.scalar_type() == at::kFloat,
                   "memopt_probe::constant_read: expected table to have dtype float32, got ",
                   dtype_name(table.scalar_type()));
  TORCH_CHECK(table.is_cuda(), "memopt_probe::constant_read: expected table on a CUDA device, got ",
              table.device());
  TORCH_CHECK(table.dim() == 1 && table.is_contiguous(),
              "memopt_probe::constant_read: expected table to be a contiguous 1-D tensor, got a ",
              table.dim(), "-D tensor of shape ", table.sizes(), " and strides ", table.strides());
  TORCH_CHECK(table.numel() >= kMinEntries && table.numel() <= kCapacity,
              "memopt_probe::constant_read: expected table to hold ", kMinEntries, " to ",
              kCapacity, " entries (a distinct entry per lane; 64 KB of constant memory), got ",
              table.numel());
  TORCH_CHECK_TYPE(out.scalar_type() == at::kFloat,
                   "memopt_probe::constant_read: expected out to have dtype float32, got ",
                   dtype_name(out.scalar_type()));
  TORCH_CHECK(out.device() == table.device(),
              "memopt_probe::constant_read: expected out on the device of table (",
              table.device(), "), got ", out.device());
  TORCH_CHECK(out.is_contiguous(),
              "memopt_probe::constant_read: expected out to be contiguous, got strides ",
              out.strides());
  TORCH_CHECK(mode >= 0 && mode <= 3,
              "memopt_probe::constant_read: expected mode 0 (constant, broadcast), 1 (constant, "
              "divergent), 2 (global, __ldg) or 3 (global, plain loads), got ",
              mode);
  TORCH_CHECK(threads >= 1 && threads <= std::numeric_limits<int32_t>::max(),
              "memopt_probe::constant_read: expected threads in [1, 2^31 - 1], got ", threads);
  TORCH_CHECK(out.numel() >= threads,
              "memopt_probe::constant_read: expected out to hold at least threads = ", threads,
              " floats, got ", out.numel());
  TORCH_CHECK(iters >= 1 && iters <= std::numeric_limits<int32_t>::max(),
              "memopt_probe::constant_read: expected iters in [1, 2^31 - 1], got ", iters);
}

void constant_read(const at::Tensor& table, int64_t mode, int64_t threads, int64_t iters,
                   at::Tensor& out) {
  check_constant_read_inputs(table, mode, threads, iters, out);
  const c10::cuda::CUDAGuard device_guard(table.device());
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  // c_table has one copy per device; the guard makes it this device's. Two
  // calls on different streams would race on it: probes run one at a time.
  C10_CUDA_CHECK(cudaMemcpyToSymbolAsync(c_table, table.const_data_ptr<float>(),
                                         static_cast<size_t>(table.numel()) * sizeof(float), 0,
                                         cudaMemcpyDeviceToDevice, stream));
  const auto kernel = mode == kBroadcast        ? constant_read_kernel<kBroadcast>
                      : mode == kConstDivergent ? constant_read_kernel<kConstDivergent>
                      : mode == kGlobalLdg      ? constant_read_kernel<kGlobalLdg>
                                                : constant_read_kernel<kGlobalPlain>;
  kernel<<<static_cast<unsigned>(ceil_div<int64_t>(threads, kThreads)), kThreads, 0, stream>>>(
      table.const_data_ptr<float>(), static_cast<int>(table.numel()), threads,
      static_cast<int>(iters), out.mutable_data_ptr<float>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

TORCH_LIBRARY_IMPL(memopt_probe, CUDA, m) { m.impl("constant_read", &constant_read); }

}  // namespace memopt
