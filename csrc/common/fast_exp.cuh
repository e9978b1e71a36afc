// e^(x - m) for softmax as 2^(x·log2(e) - m·log2(e)): one FFMA and one
// MUFU.EX2 (PTX ex2.approx.ftz.f32) an element, against ~10 instructions for
// expf's range reduction. At 4 TB/s a bf16 softmax handles 1.07e12 elements
// a second, and ~20 instructions each used 60% of the H200's issue slots
// (132 SMs x 4 schedulers x 32 lanes x 1.98 GHz = 33e12 lane-instructions a
// second): bf16 rows ran at 58-67% of copy with expf.
//
// Accuracy: ex2.approx is within 2 ulp over its range (PTX ISA); the FFMA
// rounds x·log2(e) - m·log2(e) once, a relative error of |x - m|·2^-24·ln(2)
// in the result (4e-7 at |x - m| = 10, far under the 1e-5 the tests allow for
// fp32).
// .ftz: results below 2^-126 (x - m < -87.3) are 0 instead of subnormal, an
// absolute error under 1.2e-38 in an output that the row's sum (>= 1) then
// divides. Without it ptxas wraps every MUFU.EX2 in a subnormal fix-up
// (FSETP, two predicated FMULs: 4 instructions an exponential, seen in the
// SASS of the online kernel, 2026-11-30); with it the exponential is one.
#pragma once

#include <cuda_runtime.h>

namespace memopt {

constexpr float kLog2e = 1.4426950408889634f;

__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// e^(x - m) given m_log2e = m·log2(e), computed once a row. Same edge cases
// as expf(x - m): x = -inf gives 0; x = m = +inf gives NaN (inf - inf).
__device__ __forceinline__ float exp_shifted(float x, float m_log2e) {
  return exp2_approx(fmaf(x, kLog2e, -m_log2e));
}

// The two ways to compute e^(x - m) for the elements of a row (or slice) whose
// maximum is m; with_exp_shift picks one a row, outside the element loops.
// - ExpShiftFma: one FFMA + MUFU.EX2 an element, but m·log2(e) must be a
//   float: |m| < 2.3e38 (FLT_MAX / log2(e) = 2.36e38).
// - ExpShiftExact: (x - m)·log2(e), one more instruction an element, for rows
//   whose maximum is past that: attention masks fill with finfo.min
//   (-3.39e38 in bf16, -3.40e38 in fp32), so a fully masked row or slice has
//   m = finfo.min, where m·log2(e) is -inf and the FFMA form gave +inf and
//   then NaN (seen in HF Llama and GPT-2 with enable(), 2026-11-30). torch
//   gives such a row 1/n everywhere, and so does the exact form.
struct ExpShiftFma {
  float m_log2e;
  __device__ __forceinline__ float operator()(float x) const { return exp_shifted(x, m_log2e); }
};

struct ExpShiftExact {
  float m;
  __device__ __forceinline__ float operator()(float x) const {
    return exp2_approx((x - m) * kLog2e);
  }
};

constexpr float kExpShiftFmaLimit = 2.3e38f;

// body(exp) with exp(x) = e^(x - m). The branch is uniform over a row (a warp
// or block holds one m), and real rows always take the FFMA form.
template <typename Body>
__device__ __forceinline__ void with_exp_shift(float m, Body&& body) {
  if (fabsf(m) < kExpShiftFmaLimit) {
    body(ExpShiftFma{m * kLog2e});
  } else {
    body(ExpShiftExact{m});
  }
}

}  // namespace memopt
