// Candidate shapes of the warptiled rung, built outside torch (plain nvcc,
// a few minutes) into a shared library that tune_warptiled.py loads with
// ctypes and times beside cuBLAS. The production shapes are warptiled::Tuned
// and warptiled::Small in csrc/gemm/kernels/v08_warptiled.cuh; the other rows
// are the runners-up of docs/perf-notes.md, kept to re-measure.
//
//   nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -std=c++17 --expt-relaxed-constexpr \
//        -Icsrc -shared -Xcompiler -fPIC benchmarks/tune/warptiled_configs.cu -o /tmp/tune.so
#include "gemm/kernels/v08_warptiled.cuh"

namespace {

using memopt::GemmArgs;
using memopt::warptiled::Config;

// (block tile m x n, k-step, stages, warp tile m x n, lanes along m, min
// blocks per SM, FMAs by column).
using Launcher = void (*)(const GemmArgs&, cudaStream_t);
#define MEMOPT_TUNE_CONFIGS(X)                                        \
  X(128, 256, 16, 2, 64, 64, 4, 1, true)  /* Tuned: 16 x 8 a thread */ \
  X(128, 128, 16, 2, 32, 64, 4, 2, false) /* Small: 8 x 8 a thread  */ \
  X(128, 256, 16, 2, 64, 64, 4, 1, false)                              \
  X(128, 256, 16, 3, 64, 64, 4, 1, true)                               \
  X(128, 256, 8, 4, 64, 64, 4, 1, true)                                \
  X(128, 256, 16, 2, 32, 128, 2, 1, true)                              \
  X(256, 128, 16, 2, 64, 64, 4, 1, false)                              \
  X(128, 128, 16, 2, 64, 64, 4, 2, true)

#define MEMOPT_TUNE_LAUNCHER(bm, bn, bk, st, wm, wn, lm, mb, col) \
  memopt::launch_warptiled<Config<bm, bn, bk, st, wm, wn, lm, mb, col>>,
#define MEMOPT_TUNE_NAME(bm, bn, bk, st, wm, wn, lm, mb, col) \
  #bm "x" #bn " bk" #bk " s" #st " warp" #wm "x" #wn " lanes" #lm " bycol=" #col,
constexpr Launcher kConfigs[] = {MEMOPT_TUNE_CONFIGS(MEMOPT_TUNE_LAUNCHER)};
const char* const kNames[] = {MEMOPT_TUNE_CONFIGS(MEMOPT_TUNE_NAME)};

}  // namespace

extern "C" {

int memopt_tune_count() { return sizeof(kConfigs) / sizeof(kConfigs[0]); }

const char* memopt_tune_name(int i) { return kNames[i]; }

// out [M, N] = a [M, K] @ b, b row-major [K, N] (b_col_major = 0) or W [N, K].
int memopt_tune_run(int i, const float* a, const float* b, float* out, long M, long N, long K,
                    int b_col_major, void* stream) {
  const GemmArgs p{a, K, 1, b, b_col_major ? 1 : N, b_col_major ? K : 1, nullptr, out, M, N, K,
                   memopt::Activation::none};
  kConfigs[i](p, static_cast<cudaStream_t>(stream));
  return static_cast<int>(cudaGetLastError());
}

}  // extern "C"
