// The vectorized norm kernel at one pack width under 16 bytes, for every dtype
// and parameter type: one definition file a width (norm_packs_{8,4,2}.cu),
// so that the two cores of a build compile the widths side by side (in one
// file they took 7.5 minutes of wall time on one core of the CI machine, with
// a second build beside it).
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda_runtime.h>

#include "norm/norm_common.h"

namespace memopt {

// kAdd: the fused add + norm (residual read, sum written beside the output);
// kPeel: the 16-byte packs with each row's ends peeled (launch_norm_peeled).
template <bool kRms, int kPackBytes, bool kAdd, bool kPeel = false>
void launch_norm_packs(const NormRows& p, cudaStream_t stream, const at::Tensor& residual,
                       const at::Tensor& sum);
// Compiled in norm_packs_{8,4,2}.cu only: no other file that sees the template's
// definition builds them again. The fused add has no 2-byte kernels: a 16-bit
// row of odd width (no model's hidden size) takes the add, then the norm.
#define MEMOPT_NORM_PACKS(kRms, kBytes, kAdd)                                       \
  extern template void launch_norm_packs<kRms, kBytes, kAdd>(                       \
      const NormRows&, cudaStream_t, const at::Tensor&, const at::Tensor&);
MEMOPT_NORM_PACKS(false, 8, false)
MEMOPT_NORM_PACKS(true, 8, false)
MEMOPT_NORM_PACKS(false, 8, true)
MEMOPT_NORM_PACKS(true, 8, true)
MEMOPT_NORM_PACKS(false, 4, false)
MEMOPT_NORM_PACKS(true, 4, false)
MEMOPT_NORM_PACKS(false, 4, true)
MEMOPT_NORM_PACKS(true, 4, true)
MEMOPT_NORM_PACKS(false, 2, false)
MEMOPT_NORM_PACKS(true, 2, false)
#undef MEMOPT_NORM_PACKS

// The peeled kernel (16-byte packs, single-element head and tail a row:
// norm_packs_peeled.cu), where peel_fits(p, residual, sum).
template <bool kRms, bool kAdd>
void launch_norm_peeled(const NormRows& p, cudaStream_t stream, const at::Tensor& residual,
                        const at::Tensor& sum);
#define MEMOPT_NORM_PEELED(kRms, kAdd)                                                \
  extern template void launch_norm_peeled<kRms, kAdd>(const NormRows&, cudaStream_t, \
                                                      const at::Tensor&, const at::Tensor&);
MEMOPT_NORM_PEELED(false, false)
MEMOPT_NORM_PEELED(true, false)
MEMOPT_NORM_PEELED(false, true)
MEMOPT_NORM_PEELED(true, true)
#undef MEMOPT_NORM_PEELED

// The norm for rows the 16-byte pack cannot read whole: the peeled kernel
// where peel_fits (and norm_peel(), the default), else the vectorized kernel
// with the widest pack of 8, 4 or 2 bytes that fits `p` (norm_narrow_packs.cu
// picks it). False, with nothing launched, when none fits (float32
// rows always fit 4-byte packs; 16-bit ones 2-byte packs, unless a pointer is
// odd). With `residual` and `sum` defined, the fused add + norm, 8- and 4-byte
// packs only.
template <bool kRms>
bool launch_norm_narrow_packs(const NormRows& p, cudaStream_t stream,
                              const at::Tensor& residual = {}, const at::Tensor& sum = {});

}  // namespace memopt
