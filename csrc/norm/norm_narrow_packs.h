// The vectorized norm kernel at one pack width under 16 bytes, for every dtype
// and parameter type: one definition file a width (norm_packs_{8,4,2}.cu),
// so that the two cores of a build compile the widths side by side (in one
// file they took 7.5 minutes of wall time on one core of the CI machine, with
// a second build beside it).
#pragma once

#include <cuda_runtime.h>

#include "norm/norm_common.h"

namespace memopt {

template <bool kRms, int kPackBytes>
void launch_norm_packs(const NormRows& p, cudaStream_t stream);
// Compiled in norm_packs_{8,4,2}.cu only: no other file that sees the template's
// definition builds them again.
#define MEMOPT_NORM_PACKS(kRms, kBytes) \
  extern template void launch_norm_packs<kRms, kBytes>(const NormRows&, cudaStream_t);
MEMOPT_NORM_PACKS(false, 8)
MEMOPT_NORM_PACKS(true, 8)
MEMOPT_NORM_PACKS(false, 4)
MEMOPT_NORM_PACKS(true, 4)
MEMOPT_NORM_PACKS(false, 2)
MEMOPT_NORM_PACKS(true, 2)
#undef MEMOPT_NORM_PACKS

}  // namespace memopt
