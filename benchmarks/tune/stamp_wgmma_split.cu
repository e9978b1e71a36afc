// Where a wgmma_split call's time goes, from timeline stamps inside the kernel
// (gemm/kernels/stamps.cuh): each warpgroup's first thread records
// %globaltimer at the kernel's milestones, and this prints, per milestone, the
// median and latest time over the CTAs from the first CTA's entry, beside the
// launch-to-end time of CUDA events. Before each timed launch 256 MB are
// zeroed, as do_bench's flush does.
//
//   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a --expt-relaxed-constexpr \
//     -Icsrc -o /tmp/stamp benchmarks/tune/stamp_wgmma_split.cu csrc/gemm/tma_map.cu
//   /tmp/stamp            # M = 128, N = 4096, K in {64, 256, 4096} x splits {1, 4}
#define MEMOPT_WGMMA_STAMPS 1

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "common/cluster_launch.cuh"
#include "gemm/kernels/wgmma_split_sm90.cuh"
#include "gemm/tma_map.h"
#include "stamp_common.cuh"

using namespace memopt;

namespace {

const char* kMilestones[] = {"entry",         "barriers set",  "first k-tile in",
                             "loads issued",  "mma done",      "partial written",
                             "cluster sync 1", "reduced+stored", "exit"};

void run(int M, int N, int K, int splits, void* flush, size_t flush_bytes) {
  using namespace wgmma;
  const LinearOperands ops(M, N, K);
  __nv_bfloat16 *const x = ops.x, *const w = ops.w, *const out = ops.out;
  const CUtensorMap map_a = make_tma_map(x, HalfType::bf16, M, K, K, kBlockM, kBlockK);
  const CUtensorMap map_b = make_tma_map(w, HalfType::bf16, N, K, K, kBlockN, kBlockK);
  const int64_t tiles = ((M + kBlockM - 1) / kBlockM) * ((N + kBlockN - 1) / kBlockN);
  const int k_tiles = (K + kBlockK - 1) / kBlockK;
  const int kps = (k_tiles + splits - 1) / splits;
  splits = (k_tiles + kps - 1) / kps;
  const int blocks = static_cast<int>(tiles * splits);
  const auto kernel = gemm_wgmma_split_kernel<__nv_bfloat16, true>;
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSplitSmemBytes));
  const KernelArgs args{out, nullptr, M, N, K, Activation::none};
  ClusterLaunch launch(dim3(blocks), dim3(kThreads), dim3(splits), nullptr, kSplitSmemBytes);
  constexpr int kReps = 7;
  std::vector<std::vector<double>> med(kReps), last(kReps);
  std::vector<float> event_us;
  cudaEvent_t start, end;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&end));
  for (int rep = -2; rep < kReps; ++rep) {
    CHECK(cudaMemset(flush, 0, flush_bytes));
    const float us =
        timed_us(start, end, [&] { CHECK(launch.launch(kernel, map_a, map_b, args, kps)); });
    if (rep < 0) continue;
    event_us.push_back(us);
    const StampReadout stamps;
    const auto at = [&](int b, int g, int s) { return stamps.at(b, g, s); };
    uint64_t t0 = ~uint64_t{0};
    for (int b = 0; b < blocks; ++b) t0 = std::min(t0, at(b, 0, 0));
    for (int s = 0; s < 9; ++s) {
      // Slots 3 (producer) and 0, 1, 6, 8 from warpgroup 0; the rest from consumer 1.
      const int g = (s == 0 || s == 1 || s == 3 || s == 6 || s == 8) ? 0 : 1;
      std::vector<double> v;
      for (int b = 0; b < blocks; ++b) v.push_back((at(b, g, s) - t0) * 1e-3);
      std::sort(v.begin(), v.end());
      med[rep].push_back(v[v.size() / 2]);
      last[rep].push_back(v.back());
    }
    if (rep == 0) {
      std::printf("  SMs of the first 16 blocks:");
      for (int b = 0; b < std::min(blocks, 16); ++b) {
        std::printf(" %llu", static_cast<unsigned long long>(at(b, 0, 15)));
      }
      std::printf("\n");
    }
  }
  std::sort(event_us.begin(), event_us.end());
  // The rep whose event time is the median.
  std::printf("M=%d N=%d K=%d: %lld tiles x %d splits (%d k-tiles each), events %.1f us\n", M, N,
              K, static_cast<long long>(tiles), splits, kps, event_us[kReps / 2]);
  for (int s = 0; s < 9; ++s) {
    std::vector<double> m, l;
    for (int r = 0; r < kReps; ++r) m.push_back(med[r][s]), l.push_back(last[r][s]);
    std::sort(m.begin(), m.end());
    std::sort(l.begin(), l.end());
    std::printf("  %-16s median CTA %6.2f us  last CTA %6.2f us\n", kMilestones[s], m[kReps / 2],
                l[kReps / 2]);
  }
}

}  // namespace

int main() {
  const size_t flush_bytes = size_t{256} << 20;
  void* flush;
  CHECK(cudaMalloc(&flush, flush_bytes));
  for (int K : {64, 256, 4096}) {
    for (int splits : {1, 4}) {
      if (K / 64 < splits) continue;
      run(128, 4096, K, splits, flush, flush_bytes);
    }
  }
  run(256, 4096, 4096, 3, flush, flush_bytes);
  return 0;
}
