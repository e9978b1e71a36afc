// The vectorized norm kernel at one pack width under 16 bytes, for every dtype
// and parameter type: one definition file a width (norm_packs_{8,4,2}.cu),
// so that the two cores of a build compile the widths side by side (in one
// file they were the build's last 7 minutes).
#pragma once

#include <cuda_runtime.h>

#include "norm/norm_common.h"

namespace memopt {

template <bool kRms, int kPackBytes>
void launch_norm_packs(const NormRows& p, cudaStream_t stream);

}  // namespace memopt
