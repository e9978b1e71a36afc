// softmax's staged rung (kernels/v06_staged.cuh): persistent blocks that hold
// two rows in shared memory, the next one copied in by cp.async while this
// one is reduced and written. Its own file, so that two cores compile it
// beside the other softmax kernels.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "softmax/softmax_common.h"

namespace memopt {

// Whether two buffers of p's rows fit a block's shared memory on the current
// device (~58K 16-bit or ~29K fp32 columns on Hopper).
bool staged_buffers_fit(const SoftmaxRows& p);

// The rows of p: rows along the last dim (p.inner == 1), input and output
// aligned to their elements, staged_buffers_fit.
void launch_softmax_staged(const SoftmaxRows& p, int64_t rows, cudaStream_t stream);

}  // namespace memopt
