// The most rows a grid may have for a few-rows launch, by the input's element
// size, with a tuning switch that overrides it for every dtype at once: the
// norms' and softmax's one-pack-a-thread launches (norm_common.cpp,
// softmax_common.cpp; torch_memopt._C._set_norm_few_rows and
// _set_softmax_few_rows). Host code only.
#pragma once

#include <atomic>
#include <cstdint>

namespace memopt {

class RowsBound {
 public:
  constexpr RowsBound(int64_t rows16, int64_t rows32) : rows16_(rows16), rows32_(rows32) {}

  // The bound for input of element_size bytes: the override where one is set.
  int64_t operator()(int64_t element_size) const {
    const int64_t forced = override_.load(std::memory_order_relaxed);
    if (forced >= 0) return forced;
    return element_size == 2 ? rows16_ : rows32_;
  }

  // Sets the override (0 turns the launch off, -1 restores the rule) and
  // returns the previous one.
  int64_t swap_override(int64_t rows) {
    return override_.exchange(rows, std::memory_order_relaxed);
  }

 private:
  const int64_t rows16_, rows32_;  // the rule: 16-bit input, fp32 input
  std::atomic<int64_t> override_{-1};
};

}  // namespace memopt
