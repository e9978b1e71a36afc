// The vectorized norm kernel at pack widths under 16 bytes (8, 4, 2), for rows
// whose width, stride or pointers break the 16-byte pack: N = 2050 or 4100 in
// bf16, N % 4 != 0 in fp32, a slice starting off a 16-byte boundary. Its own
// file: these are three times the 16-byte kernel's instantiations, and two
// cores build it beside norm_cuda.cu.
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include "common/dispatch.h"
#include "norm/norm_vectorized_launch.cuh"

namespace memopt {
namespace {

// The widest of 8, 4, 2 bytes whose packs fit p (and residual and sum); 0 if none.
int narrow_pack_bytes(const NormRows& p, const at::Tensor& residual, const at::Tensor& sum) {
  for (const int bytes : {8, 4, 2}) {
    if (packs_fit(p, bytes, residual, sum)) return bytes;
  }
  return 0;
}

template <typename scalar_t, typename param_t, bool kRms, bool kAdd>
bool launch_typed(const NormRows& p, const at::Tensor& residual, const at::Tensor& sum,
                  cudaStream_t stream) {
  switch (narrow_pack_bytes(p, residual, sum)) {
    case 8:
      launch_vectorized_sized<scalar_t, param_t, kRms, kAdd, 8>(p, stream, residual, sum);
      return true;
    case 4:
      launch_vectorized_sized<scalar_t, param_t, kRms, kAdd, 4>(p, stream, residual, sum);
      return true;
    case 2:
      // A 2-byte pack is one 16-bit element; float32 never gets here (4-byte
      // packs always fit its 4-byte aligned rows).
      if constexpr (sizeof(scalar_t) == 2) {
        launch_vectorized_sized<scalar_t, param_t, kRms, kAdd, 2>(p, stream, residual, sum);
        return true;
      }
      return false;
    default:
      return false;
  }
}

template <bool kRms, bool kAdd>
bool launch_any(const NormRows& p, const at::Tensor& residual, const at::Tensor& sum,
                cudaStream_t stream) {
  bool launched = false;
  MEMOPT_DISPATCH_FLOAT_TYPES(p.input.scalar_type(), "memopt_norm_narrow_packs", [&] {
    launched = p.fp32_params ? launch_typed<scalar_t, float, kRms, kAdd>(p, residual, sum, stream)
                             : launch_typed<scalar_t, scalar_t, kRms, kAdd>(p, residual, sum, stream);
  });
  return launched;
}

}  // namespace

template <bool kRms>
bool launch_norm_narrow_packs(const NormRows& p, cudaStream_t stream) {
  return launch_any<kRms, false>(p, {}, {}, stream);
}

template bool launch_norm_narrow_packs<false>(const NormRows&, cudaStream_t);
template bool launch_norm_narrow_packs<true>(const NormRows&, cudaStream_t);

}  // namespace memopt
