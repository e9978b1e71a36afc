// softmax over rows whose width or pointers break the 16-byte pack (N = 32001
// or 50257, an odd-offset slice): the online and cluster kernels with packs
// of one element (softmax_narrow.cu), or online with the ends of each row
// peeled off (softmax_peeled.cu). Before, block_smem took these rows: at
// 2048 x 32001 bf16 it ran 0.72x Liger, at 8 x 50257 0.30x eager.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "softmax/softmax_common.h"

namespace memopt {

// `cluster`: one row over a cluster of 8 CTAs (the cluster rung), else one
// row a block (online). Rows of p.input and p.out must be aligned to their
// element sizes, p.inner == 1.
void launch_softmax_narrow(const SoftmaxRows& p, int64_t rows, bool cluster, cudaStream_t stream);

// online with 16-byte packs in the middle of each row and single elements at
// its ends (kPeel in kernels/v04_online.cuh; softmax_peeled.cu): for rows of
// any width whose x and y rows start at the same offset in their packs (the
// caller checks: every contiguous input).
void launch_softmax_peeled(const SoftmaxRows& p, int64_t rows, cudaStream_t stream);

}  // namespace memopt
