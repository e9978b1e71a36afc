// The vectorized norm kernel at pack widths under 16 bytes (8, 4, 2), for rows
// whose width, stride or pointers break the 16-byte pack: N = 2050 or 4100 in
// bf16, N % 4 != 0 in fp32, a slice starting off a 16-byte boundary. This file
// picks the widest pack that fits; norm_packs_{8,4,2}.cu hold the kernels.
#include "norm/norm_narrow_packs.h"
#include "norm/norm_vectorized_launch.cuh"

namespace memopt {

template <bool kRms>
bool launch_norm_narrow_packs(const NormRows& p, cudaStream_t stream) {
  if (packs_fit(p, 8)) {
    launch_norm_packs<kRms, 8>(p, stream);
  } else if (packs_fit(p, 4)) {
    launch_norm_packs<kRms, 4>(p, stream);
  } else if (packs_fit(p, 2)) {
    // A 2-byte pack is one 16-bit element (packs_fit refuses it for float32,
    // whose 4-byte aligned rows always fit 4-byte packs).
    launch_norm_packs<kRms, 2>(p, stream);
  } else {
    return false;
  }
  return true;
}

template bool launch_norm_narrow_packs<false>(const NormRows&, cudaStream_t);
template bool launch_norm_narrow_packs<true>(const NormRows&, cudaStream_t);

}  // namespace memopt
