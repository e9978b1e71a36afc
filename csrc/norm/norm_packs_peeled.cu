// The vectorized norm kernel peeled (kPeel): 16-byte packs for rows of any
// width, each row's head and tail as single elements (kernels/v04_vectorized.cuh
// says how). Every dtype and parameter type, the norms and the fused add +
// norms; a file of its own so that it compiles beside the narrow-pack widths
// (norm_narrow_packs.h says why). norm_narrow_packs.cu picks it.
#include "norm/norm_narrow_packs.h"
#include "norm/norm_vectorized_launch.cuh"

namespace memopt {

template <bool kRms, bool kAdd>
void launch_norm_peeled(const NormRows& p, cudaStream_t stream, const at::Tensor& residual,
                        const at::Tensor& sum) {
  launch_norm_packs<kRms, 16, kAdd, true>(p, stream, residual, sum);
}

template void launch_norm_peeled<false, false>(const NormRows&, cudaStream_t, const at::Tensor&,
                                               const at::Tensor&);
template void launch_norm_peeled<true, false>(const NormRows&, cudaStream_t, const at::Tensor&,
                                              const at::Tensor&);
template void launch_norm_peeled<false, true>(const NormRows&, cudaStream_t, const at::Tensor&,
                                              const at::Tensor&);
template void launch_norm_peeled<true, true>(const NormRows&, cudaStream_t, const at::Tensor&,
                                             const at::Tensor&);

}  // namespace memopt
