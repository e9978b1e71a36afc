// Probe 3, global memory: HBM bandwidth by access width (global_read,
// global_write, global_copy with 4-, 8- or 16-byte accesses) and what an
// uncoalesced pattern costs (strided_read).
//
// The claims it tests (the source material): HBM delivers 1-3.4 TB/s (an A100
// to an H100 SXM; the H200's HBM3e is rated 4.8 TB/s, and this project's copy
// benchmarks reach 4.2 TB/s on it); a warp's accesses coalesce when its 32
// lanes touch consecutive words; 8- and 16-byte loads a thread beat 4-byte ones.
//
// Bandwidth kernels: grid-stride loops of 256-thread blocks, at most 8 blocks an
// SM (2048 threads, the most an SM holds; registers capped at 32 a thread by
// __launch_bounds__ so all 8 fit), one access of vec_bytes a thread an
// iteration. The loops are not unrolled, so a thread of read or copy has one
// load in flight at a time and the width is the only thing that changes the
// bytes in flight: 2048 threads x vec_bytes = 8, 16 or 32 KB an SM. Little's
// law at 4.8 TB/s and ~600-800 ns of loaded latency asks for ~22-29 KB an SM,
// so we expect 16-byte accesses near the copy figure and 4-byte ones near a
// third of it (write has no result to wait for: its stores pile up regardless).
// Unrolling would put several loads in flight and hide the width; that is the
// other half of the story and not what this probe asks.
//
// global_read writes one float a thread (its sum) to sink[thread]: the grid is
// min(ceil(n_vec / 256), 8 x SMs) blocks, so sink must hold grid x 256 floats,
// at most 8 x SMs x 256 (270,336 on an H200's 132 SMs). global_write stores
// float(e mod 2^24) at element e (exact in float32 at any size, so a test can
// check every element). Bytes for the driver: read n x 4, write n x 4, copy
// 2 x n x 4 (n = numel), plus read's sink (1 MB at most).
//
// strided_read: thread t reads src[(t * stride + offset) % n] once and writes
// it to sink[t]. A warp's 32 reads span 32 x stride x 4 bytes: 4 sectors of
// 32 B at stride 1, 32 sectors (one a lane, 12.5% of each used) from stride 8
// on, so the useful bandwidth should fall as 1/stride up to 8 and then stay
// flat until each lane's sector also lands in its own DRAM page and TLB entry.
// Bytes: threads x 4 useful read + threads x 4 written to sink.
//
// Measured (H200, 2026-11-30, benchmarks/results/probe_h200.json): copy 3.83,
// read 4.23, write 4.17 TB/s; 4 / 8 / 16-byte reads 2.52 / 3.84 / 4.23 TB/s;
// strided 4-byte reads over all of src: stride 1 1,271 GB/s useful (plus as
// much written to the sink: the 4-byte rate), stride 32 211 GB/s (0.166x);
// offset 1 0.98x offset 0 (1,235 vs 1,262 GB/s). The first run, 2^23 threads
// at every stride, read stride 1 at 784 GB/s: 64 MB, host-bound.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/util/safe_numerics.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "common/cuda_launch.cuh"
#include "common/device_info.h"
#include "probe/probe_checks.h"

namespace memopt {
namespace {

constexpr int kGlobalThreads = 256;
constexpr int kBlocksPerSm = 8;
constexpr int64_t kMaxGridX = std::numeric_limits<int32_t>::max();
// element e of global_write holds float(e & kPatternMask): below 2^24 every
// integer is exact in float32.
constexpr uint32_t kPatternMask = (1u << 24) - 1;

// --------------------------------------------------------------- vectors ---

template <typename Vec>
constexpr int64_t kFloatsIn = sizeof(Vec) / sizeof(float);

__device__ __forceinline__ float sum_of(float v) { return v; }
__device__ __forceinline__ float sum_of(float2 v) { return v.x + v.y; }
__device__ __forceinline__ float sum_of(float4 v) { return (v.x + v.y) + (v.z + v.w); }

__device__ __forceinline__ float pattern_value(int64_t element) {
  return static_cast<float>(static_cast<uint32_t>(element) & kPatternMask);
}

// The pattern of the vector whose first element is `e`.
__device__ __forceinline__ void set_pattern(float& v, int64_t e) { v = pattern_value(e); }
__device__ __forceinline__ void set_pattern(float2& v, int64_t e) {
  v = make_float2(pattern_value(e), pattern_value(e + 1));
}
__device__ __forceinline__ void set_pattern(float4& v, int64_t e) {
  v = make_float4(pattern_value(e), pattern_value(e + 1), pattern_value(e + 2),
                  pattern_value(e + 3));
}

// Calls f(Vec{}) with the vector type of vec_bytes (4, 8 or 16, checked).
template <typename F>
void with_vector_type(int64_t vec_bytes, F&& f) {
  if (vec_bytes == 16) return f(float4{});
  if (vec_bytes == 8) return f(float2{});
  f(float{});
}

// ------------------------------------------------------------- kernels ---

__device__ __forceinline__ int64_t global_thread() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ int64_t grid_threads() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

template <typename Vec>
__global__ void __launch_bounds__(kGlobalThreads, kBlocksPerSm)
    global_read_kernel(const Vec* src, int64_t n_vec, float* sink) {
  float sum = 0.f;
#pragma unroll 1
  for (int64_t i = global_thread(); i < n_vec; i += grid_threads()) sum += sum_of(src[i]);
  sink[global_thread()] = sum;
}

template <typename Vec>
__global__ void __launch_bounds__(kGlobalThreads, kBlocksPerSm)
    global_write_kernel(Vec* dst, int64_t n_vec) {
#pragma unroll 1
  for (int64_t i = global_thread(); i < n_vec; i += grid_threads()) {
    Vec v;
    set_pattern(v, i * kFloatsIn<Vec>);
    dst[i] = v;
  }
}

template <typename Vec>
__global__ void __launch_bounds__(kGlobalThreads, kBlocksPerSm)
    global_copy_kernel(const Vec* src, Vec* dst, int64_t n_vec) {
#pragma unroll 1
  for (int64_t i = global_thread(); i < n_vec; i += grid_threads()) dst[i] = src[i];
}

// Positions past the end wrap; only those threads pay the 64-bit modulo (a
// ~70-instruction routine that would make stride 1 compute-bound if every
// thread ran it).
__global__ void __launch_bounds__(kGlobalThreads)
    strided_read_kernel(const float* src, int64_t n, int64_t stride, int64_t offset,
                        int64_t threads, float* sink) {
  const int64_t t = global_thread();
  if (t >= threads) return;
  int64_t position = t * stride + offset;
  if (position >= n) position %= n;
  sink[t] = src[position];
}

// ------------------------------------------------------------- checks ---

using probe::check_float_cuda;
using probe::check_same_device;

void check_vec_bytes(const char* op, int64_t vec_bytes) {
  TORCH_CHECK(vec_bytes == 4 || vec_bytes == 8 || vec_bytes == 16, "memopt_probe::", op,
              ": expected vec_bytes to be 4, 8 or 16, got ", vec_bytes);
}

// t read or written vec_bytes at a time: a whole number of vectors, aligned.
void check_vector_view(const char* op, const char* name, const at::Tensor& t, int64_t vec_bytes) {
  const int64_t floats = vec_bytes / 4;
  TORCH_CHECK(t.numel() % floats == 0, "memopt_probe::", op, ": expected ", name,
              ".numel() divisible by vec_bytes / 4 = ", floats, ", got ", t.numel());
  const uintptr_t misalignment = reinterpret_cast<uintptr_t>(t.const_data_ptr()) % vec_bytes;
  TORCH_CHECK(misalignment == 0, "memopt_probe::", op, ": expected ", name,
              "'s data pointer aligned to vec_bytes = ", vec_bytes, " bytes, got an address ",
              misalignment, " bytes past a multiple");
}

// --------------------------------------------------------------- launch ---

// min(ceil(n_vec / 256), 8 x SMs): enough blocks to fill every SM, and a
// grid-stride loop past that.
int64_t bandwidth_grid(int64_t n_vec) {
  return std::min<int64_t>(ceil_div<int64_t>(n_vec, kGlobalThreads),
                           static_cast<int64_t>(sm_count()) * kBlocksPerSm);
}

void global_read(const at::Tensor& src, int64_t vec_bytes, const at::Tensor& sink) {
  check_float_cuda("global_read", "src", src);
  check_float_cuda("global_read", "sink", sink);
  check_same_device("global_read", "sink", sink, "src", src);
  check_vec_bytes("global_read", vec_bytes);
  check_vector_view("global_read", "src", src, vec_bytes);
  const c10::cuda::CUDAGuard guard(src.device());
  const int64_t n_vec = src.numel() / (vec_bytes / 4);
  if (n_vec == 0) return;
  const int64_t grid = bandwidth_grid(n_vec);
  TORCH_CHECK(sink.numel() >= grid * kGlobalThreads,
              "memopt_probe::global_read: expected sink to hold at least ", grid * kGlobalThreads,
              " floats (one a thread: 256 threads x ", grid,
              " blocks; 8 blocks an SM at most, 270336 floats on a 132-SM H200), got ",
              sink.numel());
  with_vector_type(vec_bytes, [&](auto zero) {
    using Vec = decltype(zero);
    global_read_kernel<Vec><<<static_cast<unsigned>(grid), kGlobalThreads, 0,
                              at::cuda::getCurrentCUDAStream()>>>(
        static_cast<const Vec*>(src.const_data_ptr()), n_vec, sink.mutable_data_ptr<float>());
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

void global_write(const at::Tensor& dst, int64_t vec_bytes) {
  check_float_cuda("global_write", "dst", dst);
  check_vec_bytes("global_write", vec_bytes);
  check_vector_view("global_write", "dst", dst, vec_bytes);
  const c10::cuda::CUDAGuard guard(dst.device());
  const int64_t n_vec = dst.numel() / (vec_bytes / 4);
  if (n_vec == 0) return;
  with_vector_type(vec_bytes, [&](auto zero) {
    using Vec = decltype(zero);
    global_write_kernel<Vec><<<static_cast<unsigned>(bandwidth_grid(n_vec)), kGlobalThreads, 0,
                               at::cuda::getCurrentCUDAStream()>>>(
        static_cast<Vec*>(dst.mutable_data_ptr()), n_vec);
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

void global_copy(const at::Tensor& src, const at::Tensor& dst, int64_t vec_bytes) {
  check_float_cuda("global_copy", "src", src);
  check_float_cuda("global_copy", "dst", dst);
  check_same_device("global_copy", "dst", dst, "src", src);
  TORCH_CHECK(dst.numel() == src.numel(), "memopt_probe::global_copy: expected dst to hold ",
              src.numel(), " elements (src.numel()), got ", dst.numel());
  check_vec_bytes("global_copy", vec_bytes);
  check_vector_view("global_copy", "src", src, vec_bytes);
  check_vector_view("global_copy", "dst", dst, vec_bytes);
  const c10::cuda::CUDAGuard guard(src.device());
  const int64_t n_vec = src.numel() / (vec_bytes / 4);
  if (n_vec == 0) return;
  with_vector_type(vec_bytes, [&](auto zero) {
    using Vec = decltype(zero);
    global_copy_kernel<Vec><<<static_cast<unsigned>(bandwidth_grid(n_vec)), kGlobalThreads, 0,
                              at::cuda::getCurrentCUDAStream()>>>(
        static_cast<const Vec*>(src.const_data_ptr()), static_cast<Vec*>(dst.mutable_data_ptr()),
        n_vec);
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

void check_strided_read_inputs(const at::Tensor& src, int64_t stride, int64_t offset,
                               int64_t threads, const at::Tensor& sink) {
  check_float_cuda("strided_read", "src", src);
  check_float_cuda("strided_read", "sink", sink);
  check_same_device("strided_read", "sink", sink, "src", src);
  TORCH_CHECK(src.numel() >= 1,
              "memopt_probe::strided_read: expected src to hold at least 1 element, got 0");
  TORCH_CHECK(stride >= 1, "memopt_probe::strided_read: expected stride >= 1, got ", stride);
  TORCH_CHECK(offset >= 0, "memopt_probe::strided_read: expected offset >= 0, got ", offset);
  TORCH_CHECK(threads >= 1 && ceil_div<int64_t>(threads, kGlobalThreads) <= kMaxGridX,
              "memopt_probe::strided_read: expected threads in [1, ", kMaxGridX * kGlobalThreads,
              "] (2^31 - 1 blocks of 256), got ", threads);
  TORCH_CHECK(sink.numel() >= threads,
              "memopt_probe::strided_read: expected sink to hold at least ", threads,
              " floats (one a thread), got ", sink.numel());
  int64_t last_position = 0;
  TORCH_CHECK(!c10::mul_overflows(threads - 1, stride, &last_position) &&
                  !c10::add_overflows(last_position, offset, &last_position),
              "memopt_probe::strided_read: expected (threads - 1) * stride + offset to fit in "
              "int64, got threads = ", threads, ", stride = ", stride, ", offset = ", offset);
}

void strided_read(const at::Tensor& src, int64_t stride, int64_t offset, int64_t threads,
                  const at::Tensor& sink) {
  check_strided_read_inputs(src, stride, offset, threads, sink);
  const c10::cuda::CUDAGuard guard(src.device());
  strided_read_kernel<<<static_cast<unsigned>(ceil_div<int64_t>(threads, kGlobalThreads)),
                        kGlobalThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      src.const_data_ptr<float>(), src.numel(), stride, offset, threads,
      sink.mutable_data_ptr<float>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

TORCH_LIBRARY_IMPL(memopt_probe, CUDA, m) {
  m.impl("global_read", &global_read);
  m.impl("global_write", &global_write);
  m.impl("global_copy", &global_copy);
  m.impl("strided_read", &strided_read);
}

}  // namespace memopt
