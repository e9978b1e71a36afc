// The wgmma rung's variants side by side, built outside the extension into a
// shared library that tune_wgmma.py loads with ctypes and times beside cuBLAS:
//
//   bash benchmarks/tune/build_wgmma_tune.sh /tmp/wgmma_tune.so
//
// (about a minute on 16 cores; the launchers include the kernel registry and
// the plan, so it compiles those too and links torch's libc10).
#include "gemm/half_gemm.h"

namespace {

using memopt::HalfGemmArgs;
using Launcher = void (*)(const HalfGemmArgs&, cudaStream_t);
constexpr Launcher kConfigs[] = {memopt::launch_gemm_wgmma, memopt::launch_gemm_wgmma_register_epilogue,
                                 memopt::launch_gemm_wgmma_tma_store_4stage,
                                 memopt::launch_gemm_wgmma_cluster2_tma_store,
                                 memopt::launch_gemm_wgmma_pingpong};
const char* const kNames[] = {"wgmma (TMA store, 3 stages)", "register epilogue, 4 stages",
                              "TMA store, 2 boxes, 4 stages", "2-CTA multicast + TMA store",
                              "ping-pong 128x128, 5 stages"};

}  // namespace

extern "C" {

int memopt_tune_count() { return sizeof(kConfigs) / sizeof(kConfigs[0]); }

const char* memopt_tune_name(int i) { return kNames[i]; }

// out [M, N] = act(a [M, K] @ B + bias): B is W [N, K] when k_major, else
// b [K, N]; row strides in elements. -2: operands TMA cannot read.
int memopt_tune_run(int i, const void* a, long a_stride, const void* b, long b_stride, int k_major,
                    const void* bias, void* out, long M, long N, long K, int act, int bf16,
                    void* stream) {
  const HalfGemmArgs p{a, a_stride, b, b_stride, k_major != 0, bias, out, M, N, K,
                       static_cast<memopt::Activation>(act),
                       bf16 ? memopt::HalfType::bf16 : memopt::HalfType::fp16};
  if (!memopt::wgmma_operands_ok(p)) return -2;
  kConfigs[i](p, static_cast<cudaStream_t>(stream));
  return static_cast<int>(cudaGetLastError());
}

// The splitk rung with explicit splits (0: the launcher's rule) and a
// (stages, k-boxes) config (launch_gemm_splitk_tuned lists them).
int memopt_tune_splitk(const void* a, long a_stride, const void* b, long b_stride, int k_major,
                       void* out, long M, long N, long K, int bf16, int splits, int config,
                       void* stream) {
  const HalfGemmArgs p{a, a_stride, b, b_stride, k_major != 0, nullptr, out, M, N, K,
                       memopt::Activation::none,
                       bf16 ? memopt::HalfType::bf16 : memopt::HalfType::fp16};
  if (!memopt::wgmma_operands_ok(p)) return -2;
  memopt::launch_gemm_splitk_tuned(p, splits, config, static_cast<cudaStream_t>(stream));
  return static_cast<int>(cudaGetLastError());
}

}  // extern "C"
