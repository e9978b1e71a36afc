// Where a wgmma_streamk call's time goes, from timeline stamps inside the
// persistent wgmma kernel (gemm/kernels/stamps.cuh): each warpgroup's first
// thread records %globaltimer at its milestones. Printed per milestone: the
// median and the latest CTA, from the first CTA's entry, beside the CUDA-event
// time of the launch, for the plain kernel (a tile a CTA) and stream-K at the
// same tile. Before each timed launch 256 MB are zeroed, as do_bench's flush
// does. bfloat16, linear layout (W [N, K]), TMA-store epilogue.
//
//   TORCH_INC=$(python3 -c "import torch, os; print(os.path.dirname(torch.__file__))")/include
//   nvcc -O3 -std=c++20 -gencode arch=compute_90a,code=sm_90a --expt-relaxed-constexpr \
//     -Icsrc -I$TORCH_INC -o /tmp/stamp_sk benchmarks/tune/stamp_wgmma_streamk.cu \
//     csrc/gemm/tma_map.cu csrc/gemm/gemm_plan.cpp    (gemm_plan.h reads c10's DeviceType)
//   /tmp/stamp_sk
#define MEMOPT_WGMMA_STAMPS 1

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "gemm/gemm_plan.h"
#include "gemm/kernels/wgmma_sm90.cuh"
#include "gemm/tma_map.h"
#include "stamp_common.cuh"

using namespace memopt;

namespace {

struct Milestone {
  const char* name;
  int group, slot;  // warpgroup 0 is the producer, 1 the first consumer
};
constexpr Milestone kMilestones[] = {
    {"entry", 0, 0},          {"loads issued", 0, 1},       {"1st item mma done", 1, 3},
    {"last item in", 1, 2},   {"last item mma done", 1, 4}, {"published", 1, 5},
    {"partials added", 1, 6}, {"stores issued", 1, 7},      {"exit", 1, 8},
};

// The reps' medians of the per-CTA median and latest time of each milestone;
// CTAs that never reach one (a stamp of 0 or from an earlier launch) are left out.
template <typename Tl, bool kStreamK>
void run(int M, int N, int K, void* flush, size_t flush_bytes, int sms) {
  using namespace wgmma;
  constexpr int kStaged = Tl::kOutBoxes;
  const LinearOperands ops(M, N, K);
  __nv_bfloat16 *const x = ops.x, *const w = ops.w, *const out = ops.out;
  const CUtensorMap map_a = make_tma_map(x, HalfType::bf16, M, K, K, Tl::kBlockM, kBlockK);
  const CUtensorMap map_b = make_tma_map(w, HalfType::bf16, N, K, K, Tl::kBlockN, kBlockK);
  const CUtensorMap map_out = make_tma_map(out, HalfType::bf16, M, N, N, 64, 64);
  const TileShape tile{Tl::kBlockM, Tl::kBlockN};
  const int64_t tiles =
      ((M + Tl::kBlockM - 1) / Tl::kBlockM) * ((N + Tl::kBlockN - 1) / Tl::kBlockN);
  KernelArgs args{out, nullptr, M, N, K, Activation::none};
  int grid = static_cast<int>(std::min<int64_t>(tiles, sms));
  void* ws = nullptr;
  StreamKWorkspace ws_size;
  if constexpr (kStreamK) {
    const StreamKSplit split = stream_k_split(M, N, K, tile, sms);
    ws_size = stream_k_workspace(split, tile);
    CHECK(cudaMalloc(&ws, std::max<int64_t>(ws_size.bytes, 256)));
    args.sk_units = split.sk_units;
    args.ws = {static_cast<int*>(ws),
               reinterpret_cast<float*>(static_cast<uint8_t*>(ws) + ws_size.flag_bytes)};
    grid = static_cast<int>(split.ctas);
  }
  const auto kernel = gemm_wgmma_kernel<__nv_bfloat16, Tl, true, 1, kStaged, kStreamK>;
  constexpr int kSmem = Tl::template smem_bytes<kStaged>();
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  constexpr int kReps = 7;
  constexpr int kCount = sizeof(kMilestones) / sizeof(kMilestones[0]);
  std::vector<std::vector<double>> med(kCount), last(kCount);
  std::vector<float> event_us;
  cudaEvent_t start, end;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&end));
  // Zeroed before each launch: a CTA that never reaches a milestone leaves a 0.
  const std::vector<uint64_t> zeros(StampReadout::kCount, 0);
  for (int rep = -2; rep < kReps; ++rep) {
    CHECK(cudaMemset(flush, 0, flush_bytes));
    CHECK(cudaMemcpyToSymbol(g_stamps, zeros.data(), zeros.size() * sizeof(uint64_t)));
    if (ws != nullptr) CHECK(cudaMemset(ws, 0, ws_size.flag_bytes));
    const float us = timed_us(start, end, [&] {
      kernel<<<grid, Tl::kThreads, kSmem>>>(map_a, map_b, map_out, args);
    });
    if (rep < 0) continue;
    event_us.push_back(us);
    const StampReadout stamps;
    const auto at = [&](int b, int g, int s) { return stamps.at(b, g, s); };
    uint64_t t0 = ~uint64_t{0};
    for (int b = 0; b < grid; ++b) t0 = std::min(t0, at(b, 0, 0));
    for (int i = 0; i < kCount; ++i) {
      std::vector<double> v;
      for (int b = 0; b < grid; ++b) {
        const uint64_t s = at(b, kMilestones[i].group, kMilestones[i].slot);
        if (s >= t0) v.push_back((s - t0) * 1e-3);
      }
      std::sort(v.begin(), v.end());
      med[i].push_back(v.empty() ? -1 : v[v.size() / 2]);
      last[i].push_back(v.empty() ? -1 : v.back());
    }
  }
  std::sort(event_us.begin(), event_us.end());
  std::printf("M=%d N=%d K=%d tile %dx%d %s: %lld tiles, grid %d, sk_units %lld, events %.1f us\n",
              M, N, K, Tl::kBlockM, Tl::kBlockN, kStreamK ? "stream-K" : "plain",
              static_cast<long long>(tiles), grid, static_cast<long long>(args.sk_units),
              event_us[kReps / 2]);
  for (int i = 0; i < kCount; ++i) {
    std::sort(med[i].begin(), med[i].end());
    std::sort(last[i].begin(), last[i].end());
    std::printf("  %-20s median CTA %7.2f us  last CTA %7.2f us\n", kMilestones[i].name,
                med[i][kReps / 2], last[i][kReps / 2]);
  }
  if (ws != nullptr) CHECK(cudaFree(ws));
}

template <typename Tl>
void both(int M, int N, int K, void* flush, size_t flush_bytes, int sms) {
  run<Tl, false>(M, N, K, flush, flush_bytes, sms);
  run<Tl, true>(M, N, K, flush, flush_bytes, sms);
}

}  // namespace

int main() {
  const size_t flush_bytes = size_t{256} << 20;
  void* flush;
  CHECK(cudaMalloc(&flush, flush_bytes));
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  using Wide = wgmma::Tile<128, 256>;
  using Square = wgmma::Tile<128, 128>;
  both<Wide>(128, 4096, 4096, flush, flush_bytes, sms);
  both<Square>(128, 4096, 4096, flush, flush_bytes, sms);
  both<Wide>(256, 12288, 4096, flush, flush_bytes, sms);
  both<Square>(1024, 4096, 4096, flush, flush_bytes, sms);
  run<wgmma::Tile<64, 64>, false>(128, 4096, 4096, flush, flush_bytes, sms);
  return 0;
}
