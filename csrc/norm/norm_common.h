// What layer_norm and rms_norm need on every device after their inputs are
// checked: contiguous rows, parameters in one dtype, the output, the eps.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

namespace memopt {

struct NormRows {
  // [rows, row_length] with unit inner stride, rows in_stride elements apart:
  // a view of the caller's input whenever its rows are evenly spaced (a
  // slice x[:, :N] of a wider tensor, say), else a contiguous copy.
  at::Tensor input;
  int64_t in_stride = 0;
  at::Tensor weight;  // [row_length] contiguous, or undefined
  at::Tensor bias;    // [row_length] contiguous, or undefined (always for rms_norm)
  at::Tensor out;     // the caller's output shape, contiguous, input dtype
  bool fp32_params = false;  // weight/bias are float32 while the input is not (or is)
  int64_t rows = 0;
  int64_t row_length = 0;
  float eps = 0.f;
};

// Lays checked inputs (check_norm_inputs gave `row_length`) out for a kernel.
// Weight and bias come back in one dtype: float32 when either is float32, else
// the input's. rms_norm's eps defaults as F.rms_norm's does for these dtypes:
// the float32 machine epsilon (torch uses its fp32 opmath type for half inputs).
NormRows prepare_norm_rows(const at::Tensor& input, int64_t row_length,
                           const std::optional<at::Tensor>& weight,
                           const std::optional<at::Tensor>& bias, std::optional<double> eps);

// Which kernel rows off the 16-byte pack take, where both can read them: the
// peeled one (16-byte packs, single-element head and tail a row) or the
// narrower packs that fit every row. kRule, the default, is norm_narrow_packs.cu's
// measured choice; the other two force one kernel, for the tuning script and
// the tests that check both (torch_memopt._C._set_norm_peel).
enum class NormPeel : int { kNarrow = 0, kRule = 1, kAlways = 2 };
NormPeel norm_peel();
void set_norm_peel(NormPeel mode);

// How the vectorized kernel fetches the parameters at small grids
// (norm_vectorized_launch.cuh's param_stage says which grids): kLate reads
// them from global memory after the reductions; kEarly, the default, loads
// them into registers with the row (up to 256 threads a row), else stages
// them in shared memory where the kernel can and prefetches them towards L2
// where it cannot; kPrefetch prefetches past 256 threads a row, staging
// nothing, and reads late up to it. For the latency probe and the tests
// (torch_memopt._C._set_norm_param_stage).
// kEarlyAnyGrid: the parameters in registers at any grid where the instance
// holds them there (up to 256 threads a row), for the sweep that asks whether
// past one wave pays; the wider instances prefetch them at small grids (they
// do not stage) and read them late past half a wave.
enum class NormParamFetch : int { kLate = 0, kEarly = 1, kPrefetch = 2, kEarlyAnyGrid = 3 };
NormParamFetch norm_param_stage();
void set_norm_param_stage(NormParamFetch mode);

// The most rows a grid may have for its 16-byte-pack rows of up to 256 packs
// to run one pack a thread (norm_vectorized_launch.cuh says why, with the
// measurements): kNormFewRows16 for 16-bit input, kNormFewRows32 for fp32,
// unless the tuning switch set one bound for both (swap_norm_few_rows(rows),
// 0 turning the path off; -1 restores the rule). For the tuning sweep and the
// tests (torch_memopt._C._set_norm_few_rows).
constexpr int64_t kNormFewRows16 = 512;
constexpr int64_t kNormFewRows32 = 128;
int64_t norm_few_rows(int64_t element_size);
int64_t swap_norm_few_rows(int64_t rows);  // returns the previous override

// The most rows a grid may have for its rows a few packs past a power of two of
// threads (N = 4100 fp32: 1025 packs) to keep every pack in registers on the
// next power of two, instead of re-reading the few extra packs
// (norm_vectorized_launch.cuh's row_threads). 0 for both dtypes, the rule as
// measured at 16384 rows, until a sweep at 1-512 rows says otherwise
// (benchmarks/tune/norm_few_rows_sweep.py --whole-rows). The tuning switch
// sets one bound for both (swap_norm_whole_rows; torch_memopt._C._set_norm_whole_rows).
constexpr int64_t kNormWholeRows16 = 0;
constexpr int64_t kNormWholeRows32 = 0;
int64_t norm_whole_rows(int64_t element_size);
int64_t swap_norm_whole_rows(int64_t rows);  // returns the previous override

}  // namespace memopt
