// The vectorized norm kernel with 8-byte packs: norm_vectorized_launch.cuh's
// launch_norm_packs for this width, the norms and the fused add + norms
// (norm_narrow_packs.h says why one file a width; norm_narrow_packs.cu picks
// the width).
#include "norm/norm_narrow_packs.h"
#include "norm/norm_vectorized_launch.cuh"

namespace memopt {

template void launch_norm_packs<false, 8, false>(const NormRows&, cudaStream_t, const at::Tensor&,
                                                 const at::Tensor&);
template void launch_norm_packs<true, 8, false>(const NormRows&, cudaStream_t, const at::Tensor&,
                                                const at::Tensor&);
template void launch_norm_packs<false, 8, true>(const NormRows&, cudaStream_t, const at::Tensor&,
                                                const at::Tensor&);
template void launch_norm_packs<true, 8, true>(const NormRows&, cudaStream_t, const at::Tensor&,
                                               const at::Tensor&);

}  // namespace memopt
