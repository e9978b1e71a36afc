// Rows whose width, stride or pointers break the 16-byte pack: N = 2050 or
// 4100 in bf16, N % 4 != 0 in fp32, a slice starting off a 16-byte boundary.
// The peeled kernel (norm_packs_peeled.cu) where every row's outputs sit as
// far off 16 bytes as its inputs; else the vectorized kernel at the widest
// pack under 16 bytes (8, 4, 2) that fits (norm_packs_{8,4,2}.cu).
#include "norm/norm_narrow_packs.h"
#include "norm/norm_vectorized_launch.cuh"

namespace memopt {

// The rule, from benchmarks/tune/norm_peel_check.py (H200, 2026-12-02,
// benchmarks/results/tune/norm_peel_h200.json): the peeled kernel, except where
// 8-byte packs fit and the op is not a 16-bit rms_norm. Under the registers'
// cap the peel costs layer_norm (its bias), the fused adds and fp32 rows a few
// points, which the 8-byte packs (whole sectors too) do not pay: peeled ÷
// narrow at 16384 x 4100 bf16 0.93 layer_norm, 0.97 add_rms_norm, 0.94
// add_layer_norm; fp32 4096 x 6150 0.84-0.97. Where only 4- or 2-byte packs
// fit, the peel wins: 16384 x 2050 bf16 1.00-1.19, x 1025 1.39-2.61, fp32 x
// 1025 1.03-1.16; 16-bit rms_norm wins everywhere (1.06-2.61, 1.09 at 4100).
// In small grids the peel wins where the rule took the 8-byte packs (H100,
// norm_peel_check.py --few-rows, benchmarks/results/tune/
// norm_peel_few_rows_d2b8c50_h100.json, us saved by the peel): bf16 x 4100
// layer_norm / add_rms_norm / add_layer_norm 0.70 / 0.42 / 0.67 at 1 row,
// 0.13-0.26 at 8-64 rows (a row there is latency, and the 16-byte packs take
// half the 8-byte packs' loads and warps); fp32 x 2050 0.16-0.61 at 1 row but
// rms_norm and add_rms_norm lose 0.26-0.32 at 8-64 rows. Against the aligned
// neighbour's GB/s (issue 17 asks for 0.85) it lifts bf16 add_rms_norm /
// add_layer_norm 1 x 4100 from 0.82 / 0.83 to 0.87 / 0.91, fp32
// add_layer_norm 1 x 2050 from 0.83 to 0.91.
constexpr int64_t kPeelFewRows16 = 64, kPeelFewRows32 = 1;
namespace {

template <bool kRms>
bool take_peel(const NormRows& p, const at::Tensor& residual, const at::Tensor& sum) {
  const NormPeel mode = norm_peel();
  if (mode == NormPeel::kNarrow || !peel_fits(p, residual, sum)) return false;
  if (mode == NormPeel::kAlways) return true;
  const bool is_16_bit = p.input.element_size() == 2;
  const bool plain_16_bit_rms = kRms && !residual.defined() && is_16_bit;
  const bool few_rows = p.rows <= (is_16_bit ? kPeelFewRows16 : kPeelFewRows32);
  return plain_16_bit_rms || few_rows || !packs_fit(p, 8, residual, sum);
}

}  // namespace

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
  if (take_peel<kRms>(p, residual, sum)) {
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
