// wgmma with a narrow N (8 to 64) for the split-K rung (splitk_sm90.cuh),
// where N is the token count of a decode step and A the weights: D[64 x N]
// (+)= A[64 x 16] * B[16 x N], B K-major, fp32 accumulators (N / 2 registers
// a thread, laid out like m64n256k16's first N / 8 column groups). kTransA = 1
// reads A MN-major (gemm's row-major b as the weight side), 0 K-major
// (linear's W). scale_d = 0 ignores D's old value. Beside wgmma_ptx.cuh's
// m64n256k16, which the square-tile rung uses. sm_90a only.
#pragma once

#include <cstdint>

namespace memopt {
namespace sm90 {

// One member function per element type. D_REGS names the accumulator
// operands %0..%(R-1); REST the operands after them ("%R, %R+1" the two
// descriptors, SCALE "%R+2", TRANS "%R+3"); the variadic tail is the
// accumulator constraint list.
#define MEMOPT_WGMMA_NARROW(NAME, TYPE, N, D_REGS, DESCS, SCALE, TRANS, ...)                    \
  template <int kTransA>                                                                       \
  static __device__ __forceinline__ void NAME(float(&d)[N / 2], uint64_t desc_a,               \
                                              uint64_t desc_b, int scale_d) {                  \
    asm volatile(                                                                              \
        "{\n"                                                                                  \
        ".reg .pred p;\n"                                                                      \
        "setp.ne.b32 p, " SCALE ", 0;\n"                                                       \
        "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE "." TYPE " {" D_REGS "}, " DESCS \
        ", p, 1, 1, " TRANS ", 0;\n"                                                           \
        "}\n"                                                                                  \
        : __VA_ARGS__                                                                          \
        : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransA));                               \
  }

template <int kN>
struct NarrowWgmma;

#define MEMOPT_D8_REGS "%0, %1, %2, %3"
#define MEMOPT_D8_OPS "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
template <>
struct NarrowWgmma<8> {
  MEMOPT_WGMMA_NARROW(bf16, "bf16", 8, MEMOPT_D8_REGS, "%4, %5", "%6", "%7", MEMOPT_D8_OPS)
  MEMOPT_WGMMA_NARROW(f16, "f16", 8, MEMOPT_D8_REGS, "%4, %5", "%6", "%7", MEMOPT_D8_OPS)
};
#undef MEMOPT_D8_REGS
#undef MEMOPT_D8_OPS

#define MEMOPT_D16_REGS "%0, %1, %2, %3, %4, %5, %6, %7"
#define MEMOPT_D16_OPS "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
template <>
struct NarrowWgmma<16> {
  MEMOPT_WGMMA_NARROW(bf16, "bf16", 16, MEMOPT_D16_REGS, "%8, %9", "%10", "%11", MEMOPT_D16_OPS)
  MEMOPT_WGMMA_NARROW(f16, "f16", 16, MEMOPT_D16_REGS, "%8, %9", "%10", "%11", MEMOPT_D16_OPS)
};
#undef MEMOPT_D16_REGS
#undef MEMOPT_D16_OPS

#define MEMOPT_D32_REGS "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
#define MEMOPT_D32_OPS "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
template <>
struct NarrowWgmma<32> {
  MEMOPT_WGMMA_NARROW(bf16, "bf16", 32, MEMOPT_D32_REGS, "%16, %17", "%18", "%19", MEMOPT_D32_OPS)
  MEMOPT_WGMMA_NARROW(f16, "f16", 32, MEMOPT_D32_REGS, "%16, %17", "%18", "%19", MEMOPT_D32_OPS)
};
#undef MEMOPT_D32_REGS
#undef MEMOPT_D32_OPS

#define MEMOPT_D64_REGS "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define MEMOPT_D64_OPS "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
template <>
struct NarrowWgmma<64> {
  MEMOPT_WGMMA_NARROW(bf16, "bf16", 64, MEMOPT_D64_REGS, "%32, %33", "%34", "%35", MEMOPT_D64_OPS)
  MEMOPT_WGMMA_NARROW(f16, "f16", 64, MEMOPT_D64_REGS, "%32, %33", "%34", "%35", MEMOPT_D64_OPS)
};
#undef MEMOPT_D64_REGS
#undef MEMOPT_D64_OPS

#undef MEMOPT_WGMMA_NARROW

}  // namespace sm90
}  // namespace memopt
