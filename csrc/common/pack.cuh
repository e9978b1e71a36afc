// kElems elements of type T moved as one aligned load or store: 16 bytes of
// bf16/fp16 (8) or fp32 (4) become one LDG.128 / STG.128. Used by the
// vectorized rungs of the norm and softmax ladders.
#pragma once

namespace memopt {

template <typename T, int kElems>
struct alignas(sizeof(T) * kElems) Pack {
  T v[kElems];
};

}  // namespace memopt
