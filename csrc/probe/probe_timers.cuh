// The two clocks every timed probe kernel reads, in one place.
// - global_ns: %globaltimer, wall nanoseconds, the same on every SM (ticks in
//   ~1 us steps on some GPUs, so a timed region should last >= 100 us).
// - clock_cycles: %clock64, this SM's cycle counter (cycles are what the
//   source's latency claims are written in).
// Both are asm volatile with a memory clobber: the compiler may not move a
// timed load or store across either read.
#pragma once

#include <cstdint>

namespace memopt::probe {

__device__ __forceinline__ int64_t global_ns() {
  uint64_t ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns)::"memory");
  return static_cast<int64_t>(ns);
}

__device__ __forceinline__ int64_t clock_cycles() {
  uint64_t cycles;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(cycles)::"memory");
  return static_cast<int64_t>(cycles);
}

}  // namespace memopt::probe
