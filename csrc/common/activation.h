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
    // Exact GELU, F.gelu(approximate="none"): x * Phi(x). On the GPU through
    // normcdff: erff's form left the 128 x 256 wgmma epilogue 4 registers short
    // (16 bytes of spills under the 168-register compile limit).
#if defined(__CUDA_ARCH__)
    return x * normcdff(x);
#else
    return 0.5f * x * (1.f + std::erf(x * 0.70710678118654752f));
#endif
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
