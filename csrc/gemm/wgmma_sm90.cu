// Launcher of the wgmma rung (kernels/wgmma_sm90.cuh): the 128 x 256 tile and
// the dispatch on HalfGemmArgs::tile to the narrower ones (wgmma_tiles_*.cu);
// the launch itself is wgmma_launch.cuh's. ATen-free; the caller
// (gemm_cuda.cu) checks the launch and only calls this on compute capability
// 9.0 with operands that pass wgmma_operands_ok.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstdint>

#include "common/device_info.h"
#include "common/kernel_registry.h"
#include "gemm/half_gemm.h"
#include "gemm/kernels/wgmma_sm90.cuh"
#include "gemm/tma_map.h"
#include "gemm/wgmma_launch.cuh"
#ifdef MEMOPT_WGMMA_TUNING_VARIANTS
#include "gemm/kernels/wgmma_pingpong.cuh"
#endif

namespace memopt {

using wgmma_launch::aligned_16;
using wgmma_launch::launch_clustered;
using wgmma_launch::launch_epilogue_tma;

// TMA reads global memory through 16-byte-aligned addresses and row strides
// that are multiples of 16 bytes (8 16-bit or 4 float32 elements); its
// coordinates are 32-bit; tf32 wgmma reads B only K-major.
bool wgmma_operands_ok(const HalfGemmArgs& p) {
  constexpr int64_t kMaxCoord = (int64_t{1} << 31) - 1;
  const int64_t per_16_bytes = p.dtype == HalfType::tf32 ? 4 : 8;  // elements
  return aligned_16(p.a) && aligned_16(p.b) && p.a_stride_m % per_16_bytes == 0 &&
         p.b_stride % per_16_bytes == 0 && (p.dtype != HalfType::tf32 || p.b_k_major) &&
         p.M <= kMaxCoord && p.N <= kMaxCoord && p.K <= kMaxCoord;
}

// The epilogue through shared memory and TMA stores, 3 stages: 0.87-1.03x
// cuBLAS at 4096^3 and 0.97-0.99x at 8192^3 against 0.77-0.88x and 0.92-0.98x
// for the epilogue from registers (H200, bf16, tuning harness, four runs; the
// ranges are run-to-run spread). Two staged boxes with 4 stages, and 2-CTA
// clusters, measured no better (docs/perf-notes.md).
void launch_gemm_wgmma(const HalfGemmArgs& p, cudaStream_t stream) {
  switch (p.tile) {
    case WgmmaTile::m128n256: return wgmma_launch::launch_tile<wgmma::Wide>(p, stream);
    case WgmmaTile::m128n192: return launch_gemm_wgmma_128x192(p, stream);
    case WgmmaTile::m128n168: return launch_gemm_wgmma_128x168(p, stream);
    case WgmmaTile::m64n192: return launch_gemm_wgmma_64x192(p, stream);
    case WgmmaTile::m128n128: return launch_gemm_wgmma_128x128(p, stream);
    case WgmmaTile::m128n64: return launch_gemm_wgmma_128x64(p, stream);
    case WgmmaTile::m64n256: return launch_gemm_wgmma_64x256(p, stream);
    case WgmmaTile::m64n128: return launch_gemm_wgmma_64x128(p, stream);
    case WgmmaTile::m64n64: return launch_gemm_wgmma_64x64(p, stream);
  }
}

// The variants the tuning harness (benchmarks/tune/wgmma_configs.cu) times
// beside the one above; built only there (-DMEMOPT_WGMMA_TUNING_VARIANTS), to
// keep their 12 kernels out of the extension's build time.
#ifdef MEMOPT_WGMMA_TUNING_VARIANTS
void launch_gemm_wgmma_register_epilogue(const HalfGemmArgs& p, cudaStream_t stream) {
  launch_clustered<wgmma::Wide, 1, 0>(p, stream);
}
void launch_gemm_wgmma_tma_store_4stage(const HalfGemmArgs& p, cudaStream_t stream) {
  launch_epilogue_tma<wgmma::Wide, 1, 2>(p, stream);
}
void launch_gemm_wgmma_cluster2_tma_store(const HalfGemmArgs& p, cudaStream_t stream) {
  launch_epilogue_tma<wgmma::Wide, 2, 4>(p, stream);
}

namespace {
template <typename T, bool kBKMajor>
void launch_pingpong_typed(const HalfGemmArgs& p, cudaStream_t stream) {
  using namespace wgmma_pingpong;
  const CUtensorMap map_a = make_tma_map(p.a, p.dtype, p.M, p.K, p.a_stride_m, kBlockM, kBlockK);
  const CUtensorMap map_b =
      kBKMajor ? make_tma_map(p.b, p.dtype, p.N, p.K, p.b_stride, kBlockN, kBlockK)
               : make_tma_map(p.b, p.dtype, p.K, p.N, p.b_stride, kBlockK, 64);
  const CUtensorMap map_out = make_tma_map(p.out, p.dtype, p.M, p.N, p.N, 64, 64);
  const int64_t tiles = ((p.M + kBlockM - 1) / kBlockM) * ((p.N + kBlockN - 1) / kBlockN);
  // Two consumers a block: a block takes at least two tiles when there are enough.
  const int64_t grid = std::min<int64_t>((tiles + 1) / 2, sm_count());
  constexpr auto kernel = gemm_pingpong_kernel<T, kBKMajor>;
  opt_in_shared_memory_once<kernel>(kSmemBytes);
  const KernelArgs args{p.out, p.bias, p.M, p.N, p.K, p.act};
  kernel<<<static_cast<unsigned>(grid), kThreads, kSmemBytes, stream>>>(map_a, map_b, map_out, args);
}
}  // namespace

// Ping-pong consumers on 128 x 128 tiles (kernels/wgmma_pingpong.cuh); the
// cooperative kernel where the output breaks the TMA store's rules.
void launch_gemm_wgmma_pingpong(const HalfGemmArgs& p, cudaStream_t stream) {
  if (p.N % 8 != 0 || !aligned_16(p.out)) {
    launch_clustered<wgmma::Wide, 1, 0>(p, stream);
  } else if (p.dtype == HalfType::bf16) {
    p.b_k_major ? launch_pingpong_typed<__nv_bfloat16, true>(p, stream)
                : launch_pingpong_typed<__nv_bfloat16, false>(p, stream);
  } else {
    p.b_k_major ? launch_pingpong_typed<__half, true>(p, stream)
                : launch_pingpong_typed<__half, false>(p, stream);
  }
}
#endif  // MEMOPT_WGMMA_TUNING_VARIANTS

// kernel_info (common/kernel_registry.h): launch_gemm_wgmma's 128 x 256
// kernels in bfloat16 (the tensor-core benchmark's dtype), for gemm's
// row-major b and for linear's weight [N, K], and its tf32 kernel (K-major B
// in both ops: gemm transposes b first). The narrower tiles register in
// wgmma_tiles_*.cu; the tuning variants above are left out.
namespace {

template <bool kBKMajor>
std::vector<KernelEntry> wgmma_kernels(const char* op) {
  return {{op, "wgmma", "bfloat16, epilogue through TMA stores (N % 8 == 0)",
           kernel_address(wgmma::gemm_wgmma_kernel<__nv_bfloat16, wgmma::Wide, kBKMajor, 1, 4>)},
          {op, "wgmma", "bfloat16, epilogue from registers (other N)",
           kernel_address(wgmma::gemm_wgmma_kernel<__nv_bfloat16, wgmma::Wide, kBKMajor, 1, 0>)},
          {op, "wgmma_tf32", "float32 read as tf32, 128 x 256 tiles (B K-major)",
           kernel_address(wgmma::gemm_wgmma_kernel<float, wgmma::Wide, true, 1, 0>)}};
}

MEMOPT_REGISTER_KERNELS(kGemmWgmmaKernels, wgmma_kernels<false>("gemm"));
MEMOPT_REGISTER_KERNELS(kLinearWgmmaKernels, wgmma_kernels<true>("linear"));

}  // namespace

}  // namespace memopt
