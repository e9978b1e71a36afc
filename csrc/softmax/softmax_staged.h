// softmax's staged rung (kernels/v06_staged.cuh): persistent blocks that hold
// two rows in shared memory, the next one copied in by cp.async while this
// one is reduced and written; rows too wide for one block's shared memory are
// split over a thread-block cluster (Hopper). Its own file, so that two cores
// compile it beside the other softmax kernels.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "softmax/softmax_common.h"

namespace memopt {

// The CTAs a row of p takes (1 or 2): the fewest whose shares of two
// buffers fit a block's shared memory on the current device (one block up to
// ~58K 16-bit or ~29K fp32 columns on Hopper, two up to ~116K / ~58K), or the
// override's (softmax_common.h) where that fits; 1 only where `clusters` is
// false (no clusters before Hopper); 0 where none fits.
int staged_cluster(const SoftmaxRows& p, bool clusters);

// The rows of p: rows along the last dim (p.inner == 1), input and output
// aligned to their elements, `cluster` from staged_cluster (> 0).
void launch_softmax_staged(const SoftmaxRows& p, int64_t rows, int cluster, cudaStream_t stream);

}  // namespace memopt
