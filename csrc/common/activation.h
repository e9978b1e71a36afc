// Epilogue activations of memopt::linear, shared by the CPU and CUDA kernels so
// both compute the same function (fp32 in, fp32 out, before the final rounding).
#pragma once

#include <cmath>
#include <string>
#include <type_traits>

#if defined(__CUDACC__)
#define MEMOPT_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define MEMOPT_HOST_DEVICE inline
#endif

namespace memopt {

enum class Activation { none, relu, gelu, gelu_tanh, silu };

// The names accepted by linear's `activation` argument, in schema order.
inline constexpr const char* kActivationNames = "none, relu, gelu, gelu_tanh, silu";

// Throws a ValueError naming the valid activations when `name` is not one of them.
Activation parse_activation(const std::string& name);

// erfc(z) for z >= 0, or NaN for NaN: t exp(-z^2 + P(t)), t = 1 / (1 + z / 2),
// P a degree-9 polynomial: the Chebyshev fit of Numerical Recipes (Press et
// al., 3rd ed., section 6.2.2), fractional error under 1.2e-7 at every z.
// Branch-free, ~28 SASS instructions an element where normcdff took 62: an
// epilogue unrolled over 128 accumulators is 58 KB of code with this, 127 KB
// with normcdff (nvcc -cubin for sm_90a, .text read with readelf; gelu_tanh's
// is 50 KB), and code past the SM's instruction caches streams from L2 at
// every tile: bert-base up, 8192 x 3072 x 768 + bias + gelu, 244.9 -> 106.4 us
// on the H200, gelu_tanh's time (docs/perf-notes.md).
MEMOPT_HOST_DEVICE float erfc_nonnegative(float z) {
  const auto p_of = [](float t) {
    return -1.26551223f +
           t * (1.00002368f +
                t * (0.37409196f +
                     t * (0.09678418f +
                          t * (-0.18628806f +
                               t * (0.27886807f +
                                    t * (-1.13520398f +
                                         t * (1.48851587f +
                                              t * (-0.82215223f + t * 0.17087277f))))))));
  };
#if defined(__CUDA_ARCH__)
  // __fdividef: 2 ulp, and 0 past 2^126, as erfc is. __expf (ex2.approx):
  // within 2 + 1.2 |v| ulp, so only the tail loses bits, where erfc is tiny
  // (float32 GELU stays within 3.8e-7 of float64 over [-12, 12]); expf's range
  // reduction cost the 128 x 256 epilogue a spilled register (ptxas -v).
  const float t = __fdividef(1.f, 1.f + 0.5f * z);
  const float e = __expf(-z * z + p_of(t));
#else
  const float t = 1.f / (1.f + 0.5f * z);
  const float e = std::exp(-z * z + p_of(t));
#endif
  return t * e;
}

// The activation as a compile-time choice: an epilogue that runs it over a
// tile's 64-128 accumulators a thread takes it this way (through
// with_activation), so its unrolled loop holds one activation's code rather
// than a switch over all five at every element.
template <Activation kAct>
MEMOPT_HOST_DEVICE float activate(float x) {
  if constexpr (kAct == Activation::relu) {
    // `x < 0 ? 0 : x`, not fmaxf: fmaxf(NaN, 0) is 0, torch.relu(NaN) is NaN.
    return x < 0.f ? 0.f : x;
  } else if constexpr (kAct == Activation::gelu) {
    // Exact GELU, F.gelu(approximate="none"): x * Phi(x), Phi(x) = erfc(-x /
    // sqrt 2) / 2 taken on |x| (erfc_nonnegative) so that neither tail cancels:
    // 3.8e-7 from float64 at most over [-12, 12] in float32. The same code on
    // the CPU and the GPU. NaN stays NaN (x >= 0 is false, erfc's NaN is kept).
    const float half_erfc = 0.5f * erfc_nonnegative(fabsf(x) * 0.70710678118654752f);
    return x * (x >= 0.f ? 1.f - half_erfc : half_erfc);
  } else if constexpr (kAct == Activation::gelu_tanh) {
    // F.gelu(approximate="tanh"): sqrt(2/pi) * (x + 0.044715 x^3).
    const float inner = 0.79788456080286536f * (x + 0.044715f * x * x * x);
    return 0.5f * x * (1.f + tanhf(inner));
  } else if constexpr (kAct == Activation::silu) {
    return x / (1.f + expf(-x));
  } else {
    return x;
  }
}

template <Activation kAct>
using ActivationTag = std::integral_constant<Activation, kAct>;

// Calls fn(ActivationTag<act>{}) with `act` as a compile-time constant: the
// switch runs once, outside the caller's loop.
template <typename Fn>
MEMOPT_HOST_DEVICE void with_activation(Activation act, const Fn& fn) {
  switch (act) {
    case Activation::relu:
      return fn(ActivationTag<Activation::relu>{});
    case Activation::gelu:
      return fn(ActivationTag<Activation::gelu>{});
    case Activation::gelu_tanh:
      return fn(ActivationTag<Activation::gelu_tanh>{});
    case Activation::silu:
      return fn(ActivationTag<Activation::silu>{});
    case Activation::none:
    default:
      return fn(ActivationTag<Activation::none>{});
  }
}

// The activation chosen at run time, for code that applies it to a few
// values at a time.
MEMOPT_HOST_DEVICE float apply_activation(Activation act, float x) {
  float y = x;
  with_activation(act, [&](auto tag) { y = activate<decltype(tag)::value>(x); });
  return y;
}

}  // namespace memopt
