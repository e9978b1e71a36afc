// softmax's staged rung (kernels/v06_staged.cuh): persistent blocks that hold
// two rows in shared memory, the next one copied in by cp.async while this
// one is reduced and written. Its own file, so that two cores compile it
// beside the other softmax kernels.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "softmax/softmax_common.h"

namespace memopt {

// Whether staged takes these rows on the current device: rows along the last
// dim (p.inner == 1) whose two buffers fit a block's shared memory (~58K
// 16-bit or ~29K fp32 columns on Hopper), input and output aligned to their
// elements.
bool staged_fits(const SoftmaxRows& p);

// The rows of p (staged_fits must hold).
void launch_softmax_staged(const SoftmaxRows& p, int64_t rows, cudaStream_t stream);

}  // namespace memopt
