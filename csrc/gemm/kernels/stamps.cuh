// Timeline stamps for tuning builds: MEMOPT_STAMP(slot) records %globaltimer
// (ns) into g_stamps[block][warpgroup][slot] from each warpgroup's first
// thread, so a probe (benchmarks/tune/stamp_wgmma_split.cu) can see where a
// kernel's time goes. It compiles to nothing unless the translation unit
// defines MEMOPT_WGMMA_STAMPS before including a kernel: the extension never
// does.
#pragma once

#include <cstdint>

#ifdef MEMOPT_WGMMA_STAMPS
namespace memopt {
constexpr int kStampBlocks = 1024, kStampGroups = 3, kStampSlots = 16;
__device__ uint64_t g_stamps[kStampBlocks][kStampGroups][kStampSlots];
__device__ __forceinline__ void stamp(int slot) {
  if (threadIdx.x % 128 != 0 || blockIdx.x >= kStampBlocks) return;
  uint64_t now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  g_stamps[blockIdx.x][threadIdx.x / 128][slot] = now;
}
// The SM this block runs on, in the last slot.
__device__ __forceinline__ void stamp_sm() {
  if (threadIdx.x != 0 || blockIdx.x >= kStampBlocks) return;
  uint32_t sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  g_stamps[blockIdx.x][0][kStampSlots - 1] = sm;
}
}  // namespace memopt
#define MEMOPT_STAMP(slot) ::memopt::stamp(slot)
#define MEMOPT_STAMP_SM() ::memopt::stamp_sm()
#else
#define MEMOPT_STAMP(slot) ((void)0)
#define MEMOPT_STAMP_SM() ((void)0)
#endif
