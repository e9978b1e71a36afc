// wgmma m64nNk16 for N = 8 to 192, fp32 accumulators (N / 2 registers a
// thread, laid out like m64n256k16's first N / 8 column groups):
// D[64 x N] (+)= A[64 x 16] * B[16 x N] from shared memory through two
// descriptors. kTransA / kTransB = 1 read that operand MN-major, 0 K-major;
// scale_d = 0 ignores D's old value. Users: the split-K rung (N = the token
// count of a decode step, A = the weights; splitk_sm90.cuh) and the ping-pong
// wgmma variant (N = 128; wgmma_pingpong.cuh). wgmma_ptx.cuh has m64n256k16
// for the cooperative wgmma kernel. N = 192: the wgmma rung's 128 x 192 and
// 64 x 192 tiles; N = 168 (84 registers, bf16 / f16 only): its 128 x 168
// tile. N = 64, 128 and 192 also in tf32 (the wgmma rung's tf32 path).
// sm_90a only.
#pragma once

#include <cstdint>

namespace memopt {
namespace sm90 {

// One member function per element type. D_REGS names the accumulator
// operands %0..%(R-1); DESCS the two descriptors "%R, %R+1", SCALE "%R+2",
// TRANS the two transpose immediates "%R+3, %R+4"; the variadic tail is the
// accumulator constraint list.
#define MEMOPT_WGMMA_NARROW(NAME, TYPE, N, D_REGS, DESCS, SCALE, TRANS, ...)                    \
  template <int kTransA, int kTransB>                                                          \
  static __device__ __forceinline__ void NAME(float(&d)[N / 2], uint64_t desc_a,               \
                                              uint64_t desc_b, int scale_d) {                  \
    asm volatile(                                                                              \
        "{\n"                                                                                  \
        ".reg .pred p;\n"                                                                      \
        "setp.ne.b32 p, " SCALE ", 0;\n"                                                       \
        "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE "." TYPE " {" D_REGS "}, " DESCS \
        ", p, 1, 1, " TRANS ";\n"                                                              \
        "}\n"                                                                                  \
        : __VA_ARGS__                                                                          \
        : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransA), "n"(kTransB));                 \
  }

// tf32 (float32 operands, both K-major: no transpose immediates), k8.
#define MEMOPT_WGMMA_NARROW_TF32(N, D_REGS, DESCS, SCALE, ...)                                   \
  static __device__ __forceinline__ void tf32(float(&d)[N / 2], uint64_t desc_a, uint64_t desc_b, \
                                              int scale_d) {                                     \
    asm volatile(                                                                                \
        "{\n"                                                                                    \
        ".reg .pred p;\n"                                                                        \
        "setp.ne.b32 p, " SCALE ", 0;\n"                                                         \
        "wgmma.mma_async.sync.aligned.m64n" #N "k8.f32.tf32.tf32 {" D_REGS "}, " DESCS            \
        ", p, 1, 1;\n"                                                                           \
        "}\n"                                                                                    \
        : __VA_ARGS__                                                                            \
        : "l"(desc_a), "l"(desc_b), "r"(scale_d));                                               \
  }

template <int kN>
struct NarrowWgmma;

#define MEMOPT_D8_REGS "%0, %1, %2, %3"
#define MEMOPT_D8_OPS "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
template <>
struct NarrowWgmma<8> {
  MEMOPT_WGMMA_NARROW(bf16, "bf16", 8, MEMOPT_D8_REGS, "%4, %5", "%6", "%7, %8", MEMOPT_D8_OPS)
  MEMOPT_WGMMA_NARROW(f16, "f16", 8, MEMOPT_D8_REGS, "%4, %5", "%6", "%7, %8", MEMOPT_D8_OPS)
};
#undef MEMOPT_D8_REGS
#undef MEMOPT_D8_OPS

#define MEMOPT_D16_REGS "%0, %1, %2, %3, %4, %5, %6, %7"
#define MEMOPT_D16_OPS "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
template <>
struct NarrowWgmma<16> {
  MEMOPT_WGMMA_NARROW(bf16, "bf16", 16, MEMOPT_D16_REGS, "%8, %9", "%10", "%11, %12", MEMOPT_D16_OPS)
  MEMOPT_WGMMA_NARROW(f16, "f16", 16, MEMOPT_D16_REGS, "%8, %9", "%10", "%11, %12", MEMOPT_D16_OPS)
};
#undef MEMOPT_D16_REGS
#undef MEMOPT_D16_OPS

#define MEMOPT_D32_REGS "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
#define MEMOPT_D32_OPS "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
template <>
struct NarrowWgmma<32> {
  MEMOPT_WGMMA_NARROW(bf16, "bf16", 32, MEMOPT_D32_REGS, "%16, %17", "%18", "%19, %20", MEMOPT_D32_OPS)
  MEMOPT_WGMMA_NARROW(f16, "f16", 32, MEMOPT_D32_REGS, "%16, %17", "%18", "%19, %20", MEMOPT_D32_OPS)
};
#undef MEMOPT_D32_REGS
#undef MEMOPT_D32_OPS

#define MEMOPT_D64_REGS "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define MEMOPT_D64_OPS "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
template <>
struct NarrowWgmma<64> {
  MEMOPT_WGMMA_NARROW(bf16, "bf16", 64, MEMOPT_D64_REGS, "%32, %33", "%34", "%35, %36", MEMOPT_D64_OPS)
  MEMOPT_WGMMA_NARROW(f16, "f16", 64, MEMOPT_D64_REGS, "%32, %33", "%34", "%35, %36", MEMOPT_D64_OPS)
  MEMOPT_WGMMA_NARROW_TF32(64, MEMOPT_D64_REGS, "%32, %33", "%34", MEMOPT_D64_OPS)
};
#undef MEMOPT_D64_REGS
#undef MEMOPT_D64_OPS

#define MEMOPT_D128_REGS "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define MEMOPT_D128_OPS "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
template <>
struct NarrowWgmma<128> {
  MEMOPT_WGMMA_NARROW(bf16, "bf16", 128, MEMOPT_D128_REGS, "%64, %65", "%66", "%67, %68", MEMOPT_D128_OPS)
  MEMOPT_WGMMA_NARROW(f16, "f16", 128, MEMOPT_D128_REGS, "%64, %65", "%66", "%67, %68", MEMOPT_D128_OPS)
  MEMOPT_WGMMA_NARROW_TF32(128, MEMOPT_D128_REGS, "%64, %65", "%66", MEMOPT_D128_OPS)
};
#undef MEMOPT_D128_REGS
#undef MEMOPT_D128_OPS

#define MEMOPT_D168_REGS "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83"
#define MEMOPT_D168_OPS "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83])
// bf16 / f16 only: the wgmma rung's 128 x 168 tile takes linear's 16-bit
// weights only (gemm_plan.cpp), so there is no tf32 member.
template <>
struct NarrowWgmma<168> {
  MEMOPT_WGMMA_NARROW(bf16, "bf16", 168, MEMOPT_D168_REGS, "%84, %85", "%86", "%87, %88", MEMOPT_D168_OPS)
  MEMOPT_WGMMA_NARROW(f16, "f16", 168, MEMOPT_D168_REGS, "%84, %85", "%86", "%87, %88", MEMOPT_D168_OPS)
};
#undef MEMOPT_D168_REGS
#undef MEMOPT_D168_OPS

#define MEMOPT_D192_REGS "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
#define MEMOPT_D192_OPS "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
template <>
struct NarrowWgmma<192> {
  MEMOPT_WGMMA_NARROW(bf16, "bf16", 192, MEMOPT_D192_REGS, "%96, %97", "%98", "%99, %100", MEMOPT_D192_OPS)
  MEMOPT_WGMMA_NARROW(f16, "f16", 192, MEMOPT_D192_REGS, "%96, %97", "%98", "%99, %100", MEMOPT_D192_OPS)
  MEMOPT_WGMMA_NARROW_TF32(192, MEMOPT_D192_REGS, "%96, %97", "%98", MEMOPT_D192_OPS)
};
#undef MEMOPT_D192_REGS
#undef MEMOPT_D192_OPS

#undef MEMOPT_WGMMA_NARROW
#undef MEMOPT_WGMMA_NARROW_TF32

}  // namespace sm90
}  // namespace memopt
