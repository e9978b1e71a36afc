// Probe 4, array of structs against struct of arrays: the particle update
// x += vx * dt, y += vy * dt, z += vz * dt for n particles, one thread a
// particle, in two layouts of the same six floats.
//
//   aos  float32 [n, 6]: x, y, z, vx, vy, vz of particle i at i * 24 bytes.
//        Thread i loads its 6 floats; neighbouring threads' loads of one field
//        are 24 B apart, so each of the 6 warp-wide loads spans 32 x 24 = 768 B
//        (24 sectors) where it needs 128 B (4 sectors): 6 times the L1
//        wavefronts an instruction. The x, y, z stores are 12 B of every 24 B;
//        since every 32-byte sector holds part of some x, y or z, every sector
//        of the array turns dirty and goes back to DRAM whole.
//   soa  float32 [6, n]: row f holds field f of every particle; thread i reads
//        x[i] ... vz[i], each warp-wide load 128 contiguous bytes, and writes
//        only the x, y, z rows.
//
// DRAM bytes a particle (what the driver's GB/s should be computed from):
// both read 24 B; soa writes 12 B, aos writes back 24 B (whole dirty sectors),
// so at HBM bandwidth we expect soa 48 / 36 = 1.33x faster, plus whatever the
// 6x L1 wavefronts of aos cost on top. The source material's claim: SoA is
// coalesced, AoS strided, and SoA is faster.
//
// Both kernels use 6 scalar loads: a float* only promises 4-byte alignment,
// and aos rows sit at 8-byte multiples, so the compiler may not widen them;
// soa gets no vector loads either, so the two differ in layout alone.
//
// Measured (H200, 2026-11-30, benchmarks/results/probe_h200.json): 33.5 M
// particles, SoA 291 us (4,149 GB/s), AoS 438 us (2,757 GB/s): 1.50x.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <cstdint>
#include <limits>

#include "common/cuda_launch.cuh"
#include "common/dtype_names.h"

namespace memopt {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kFields = 6;  // x, y, z, vx, vy, vz

__global__ void __launch_bounds__(kThreads)
    particles_aos_kernel(float* __restrict__ particles, int64_t n, float dt) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= n) return;
  float* p = particles + i * kFields;  // 24 B after the previous thread's particle
  const float x = p[0], y = p[1], z = p[2];
  const float vx = p[3], vy = p[4], vz = p[5];
  p[0] = x + vx * dt;
  p[1] = y + vy * dt;
  p[2] = z + vz * dt;
}

__global__ void __launch_bounds__(kThreads)
    particles_soa_kernel(float* __restrict__ particles, int64_t n, float dt) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= n) return;
  float* p = particles + i;  // field f of particle i at p[f * n]
  // All six loads before the first store, as in aos: the compiler cannot prove
  // p[0] and p[n] apart (n could be 0), so a load after a store would wait for
  // the previous load's DRAM latency instead of overlapping it.
  const float x = p[0], y = p[n], z = p[2 * n];
  const float vx = p[3 * n], vy = p[4 * n], vz = p[5 * n];
  p[0] = x + vx * dt;
  p[n] = y + vy * dt;
  p[2 * n] = z + vz * dt;
}

// float32, CUDA, contiguous, 2-D with 6 fields along `fields_dim` (1 for aos,
// 0 for soa). Returns n, the particle count.
int64_t check_particles(const char* op, const at::Tensor& particles, int64_t fields_dim,
                        const char* layout) {
  TORCH_CHECK_TYPE(particles.scalar_type() == at::kFloat, "memopt_probe::", op,
                   ": expected particles to have dtype float32, got ",
                   dtype_name(particles.scalar_type()));
  TORCH_CHECK(particles.is_cuda(), "memopt_probe::", op,
              ": expected particles on a CUDA device, got ", particles.device());
  TORCH_CHECK(particles.dim() == 2, "memopt_probe::", op, ": expected particles to be a 2-D tensor ",
              layout, ", got a ", particles.dim(), "-D tensor of shape ", particles.sizes());
  TORCH_CHECK(particles.size(fields_dim) == kFields, "memopt_probe::", op,
              ": expected particles of shape ", layout, " (", kFields, " fields along dim ",
              fields_dim, "), got ", particles.sizes());
  TORCH_CHECK(particles.is_contiguous(), "memopt_probe::", op,
              ": expected particles to be contiguous (the layout is what is measured), got strides ",
              particles.strides());
  return particles.size(1 - fields_dim);
}

template <typename Kernel>
void launch_particles(Kernel kernel, at::Tensor& particles, int64_t n, double dt) {
  if (n == 0) return;
  const c10::cuda::CUDAGuard device_guard(particles.device());
  const int64_t blocks = ceil_div<int64_t>(n, kThreads);
  // Unreachable for any tensor that fits in memory (2^31 blocks are 5.5e11
  // particles), but the cast below would wrap silently.
  TORCH_CHECK(blocks <= std::numeric_limits<int32_t>::max(),
              "memopt_probe: expected at most 2^31 - 1 blocks of ", kThreads, " particles, got ",
              blocks);
  kernel<<<static_cast<unsigned>(blocks), kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      particles.mutable_data_ptr<float>(), n, static_cast<float>(dt));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

void particles_aos(at::Tensor& particles, double dt) {
  const int64_t n = check_particles("particles_aos", particles, 1, "[n, 6]");
  launch_particles(particles_aos_kernel, particles, n, dt);
}

void particles_soa(at::Tensor& particles, double dt) {
  const int64_t n = check_particles("particles_soa", particles, 0, "[6, n]");
  launch_particles(particles_soa_kernel, particles, n, dt);
}

}  // namespace

TORCH_LIBRARY_IMPL(memopt_probe, CUDA, m) {
  m.impl("particles_aos", &particles_aos);
  m.impl("particles_soa", &particles_soa);
}

}  // namespace memopt
