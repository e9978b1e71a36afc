// max() that propagates NaN as torch's reductions do: fmaxf(NaN, x) returns x,
// which would let a NaN in a softmax row vanish from its maximum.
#pragma once

#include <cmath>

#include "common/activation.h"  // MEMOPT_HOST_DEVICE

namespace memopt {

MEMOPT_HOST_DEVICE float nan_propagating_max(float a, float b) {
  return (a != a || a > b) ? a : b;
}

}  // namespace memopt
