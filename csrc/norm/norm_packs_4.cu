// The vectorized norm kernel with 4-byte packs: norm_vectorized_launch.cuh's
// launch_norm_packs for this width (norm_narrow_packs.h says why one file a
// width; norm_narrow_packs.cu picks the width).
#include "norm/norm_narrow_packs.h"
#include "norm/norm_vectorized_launch.cuh"

namespace memopt {

template void launch_norm_packs<false, 4>(const NormRows&, cudaStream_t);
template void launch_norm_packs<true, 4>(const NormRows&, cudaStream_t);

}  // namespace memopt
