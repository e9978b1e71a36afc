// max() that propagates NaN as torch's reductions do: fmaxf(NaN, x) returns x,
// which would let a NaN in a softmax row vanish from its maximum.
#pragma once

#include <cmath>

#include "common/activation.h"  // MEMOPT_HOST_DEVICE

namespace memopt {

MEMOPT_HOST_DEVICE float nan_propagating_max(float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  // One FMNMX.NAN (PTX max.NaN.f32, sm_80+) instead of the compare, compare
  // and select below: softmax takes one per element, and bf16 rows were
  // bound by instruction issue, not by bytes (perf-notes, issue 5).
  float m;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(m) : "f"(a), "f"(b));
  return m;
#else
  return (a != a || a > b) ? a : b;
#endif
}

}  // namespace memopt
