// Epilogue activations of memopt::linear, shared by the CPU and CUDA kernels so
// both compute the same function (fp32 in, fp32 out, before the final rounding).
#pragma once

#include <cmath>
#include <string>

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

MEMOPT_HOST_DEVICE float apply_activation(Activation act, float x) {
  switch (act) {
    case Activation::relu:
      // `x < 0 ? 0 : x`, not fmaxf: fmaxf(NaN, 0) is 0, torch.relu(NaN) is NaN.
      return x < 0.f ? 0.f : x;
    case Activation::gelu:
      // Exact GELU, F.gelu(approximate="none"): x * Phi(x).
      return 0.5f * x * (1.f + erff(x * 0.70710678118654752f));
    case Activation::gelu_tanh: {
      // F.gelu(approximate="tanh"): sqrt(2/pi) * (x + 0.044715 x^3).
      const float inner = 0.79788456080286536f * (x + 0.044715f * x * x * x);
      return 0.5f * x * (1.f + tanhf(inner));
    }
    case Activation::silu:
      return x / (1.f + expf(-x));
    case Activation::none:
    default:
      return x;
  }
}

}  // namespace memopt
