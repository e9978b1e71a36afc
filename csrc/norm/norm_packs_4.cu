// The vectorized norm kernel with 4-byte packs (norm_narrow_packs.h says why
// one file a width; norm_narrow_packs.cu picks the width).
#include "common/dispatch.h"
#include "norm/norm_narrow_packs.h"
#include "norm/norm_vectorized_launch.cuh"

namespace memopt {

template <bool kRms, int kPackBytes>
void launch_norm_packs(const NormRows& p, cudaStream_t stream) {
  MEMOPT_DISPATCH_FLOAT_TYPES(p.input.scalar_type(), "memopt_norm_packs", [&] {
    if constexpr (kPackBytes >= static_cast<int>(sizeof(scalar_t))) {
      if (p.fp32_params) {
        launch_vectorized_sized<scalar_t, float, kRms, false, kPackBytes>(p, stream);
      } else {
        launch_vectorized_sized<scalar_t, scalar_t, kRms, false, kPackBytes>(p, stream);
      }
    }
  });
}

template void launch_norm_packs<false, 4>(const NormRows&, cudaStream_t);
template void launch_norm_packs<true, 4>(const NormRows&, cudaStream_t);

}  // namespace memopt
