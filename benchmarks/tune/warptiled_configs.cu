// Candidate shapes of the warptiled rung, built outside torch (plain nvcc,
// seconds) into a shared library that tune_warptiled.py loads with ctypes and
// times beside cuBLAS. The production shape is warptiled::Tuned in
// csrc/gemm/kernels/v08_warptiled.cuh; this file only instantiates others.
//
//   nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -std=c++17 --expt-relaxed-constexpr \
//        -Icsrc -shared -Xcompiler -fPIC benchmarks/tune/warptiled_configs.cu -o /tmp/tune.so
#include "gemm/kernels/v08_warptiled.cuh"

namespace {

using memopt::GemmArgs;
using memopt::warptiled::Config;

// (k-step, stages, warp tile m x n, lanes along m, min blocks per SM).
using Launcher = void (*)(const GemmArgs&, cudaStream_t);
constexpr Launcher kConfigs[] = {
    memopt::launch_warptiled<Config<16, 2, 32, 64, 4, 2>>,  // 0: 256 threads, 8 x 8 a thread
    memopt::launch_warptiled<Config<8, 3, 64, 64, 4, 2>>,   // 1: 128 threads, 16 x 8
    memopt::launch_warptiled<Config<16, 2, 64, 64, 4, 2>>,  // 2
    memopt::launch_warptiled<Config<16, 3, 64, 64, 4, 2>>,  // 3
    memopt::launch_warptiled<Config<8, 3, 64, 64, 8, 2>>,   // 4: 128 threads, 8 x 16
    memopt::launch_warptiled<Config<16, 2, 64, 64, 8, 2>>,  // 5
    memopt::launch_warptiled<Config<16, 3, 64, 64, 8, 2>>,  // 6
};
const char* const kNames[] = {
    "bk16 s2 256t 8x8", "bk8 s3 128t 16x8", "bk16 s2 128t 16x8", "bk16 s3 128t 16x8",
    "bk8 s3 128t 8x16", "bk16 s2 128t 8x16", "bk16 s3 128t 8x16",
};

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
