#include "common/activation.h"

#include <c10/util/Exception.h>

namespace memopt {

Activation parse_activation(const std::string& name) {
  if (name == "none") return Activation::none;
  if (name == "relu") return Activation::relu;
  if (name == "gelu") return Activation::gelu;
  if (name == "gelu_tanh") return Activation::gelu_tanh;
  if (name == "silu") return Activation::silu;
  TORCH_CHECK_VALUE(false, "memopt::linear: unknown activation '", name,
                    "'; valid activations: ", kActivationNames);
}

}  // namespace memopt
