// Rows whose width, stride or pointers break the 16-byte pack: N = 2050 or
// 4100 in bf16, N % 4 != 0 in fp32, a slice starting off a 16-byte boundary.
// The peeled kernel (norm_packs_peeled.cu) where every row's outputs sit as
// far off 16 bytes as its inputs; else the vectorized kernel at the widest
// pack under 16 bytes (8, 4, 2) that fits (norm_packs_{8,4,2}.cu).
#include "norm/norm_narrow_packs.h"
#include "norm/norm_vectorized_launch.cuh"

namespace memopt {

template <bool kRms>
bool launch_norm_narrow_packs(const NormRows& p, cudaStream_t stream, const at::Tensor& residual,
                              const at::Tensor& sum) {
  const bool add = residual.defined();
  const auto launch = [&](auto width) {
    constexpr int kBytes = decltype(width)::value;
    if (add) {
      if constexpr (kBytes > 2) launch_norm_packs<kRms, kBytes, true>(p, stream, residual, sum);
    } else {
      launch_norm_packs<kRms, kBytes, false>(p, stream, residual, sum);
    }
  };
  if (norm_peel() && peel_fits(p, residual, sum)) {
    add ? launch_norm_peeled<kRms, true>(p, stream, residual, sum)
        : launch_norm_peeled<kRms, false>(p, stream, residual, sum);
  } else if (packs_fit(p, 8, residual, sum)) {
    launch(std::integral_constant<int, 8>{});
  } else if (packs_fit(p, 4, residual, sum)) {
    launch(std::integral_constant<int, 4>{});
  } else if (!add && packs_fit(p, 2)) {
    // A 2-byte pack is one 16-bit element (packs_fit refuses it for float32,
    // whose 4-byte aligned rows always fit 4-byte packs).
    launch(std::integral_constant<int, 2>{});
  } else {
    return false;
  }
  return true;
}

template bool launch_norm_narrow_packs<false>(const NormRows&, cudaStream_t, const at::Tensor&,
                                              const at::Tensor&);
template bool launch_norm_narrow_packs<true>(const NormRows&, cudaStream_t, const at::Tensor&,
                                             const at::Tensor&);

}  // namespace memopt
