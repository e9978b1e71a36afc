// The mma rung: bf16 / fp16 GEMM on the tensor cores of any sm_80+ GPU
// (Ampere, Ada; Hopper runs it too, wgmma_sm90.cuh is its fast path there).
//
// What changes from a SIMT kernel (warptiled, rung 8): the multiply-adds move
// from FFMA, one per thread and cycle, to mma.sync.m16n8k16: one warp
// instruction does 16 x 8 x 16 = 2048 multiply-adds with fp32 accumulation.
// The bottleneck a SIMT kernel hits, FMA issue (and the shared-memory reads
// that feed it: 6 LDS.128 a thread per 128 FMAs), goes away; what is left to
// feed is shared memory to registers (ldmatrix) and HBM/L2 to shared memory
// (cp.async), and both are hidden behind the mmas:
// - ldmatrix.x4 loads one 16x16 A fragment, or the B fragments of two n8
//   tiles, for a whole warp in one instruction; ldmatrix.trans reads gemm's
//   row-major B [K, N] (MN-major) transposed, so neither layout of B is ever
//   copied. A warp owns 64 x 64 of the output: per k-step of 16 it issues
//   4 + 4 ldmatrix.x4 (4 KB of shared memory) for 4 x 8 = 32 mmas (64K
//   multiply-adds): 0.25 ldmatrix a mma, 16 FLOP per byte of shared memory.
// - Swizzled shared memory: each 16-byte chunk sits at chunk ^ f(row) inside
//   its row (TileShape::offset), so the 8 rows an 8x8 ldmatrix matrix reads
//   fall in 8 different 16-byte bank groups: conflict-free without padding,
//   for ldmatrix, ldmatrix.trans and the 16-byte cp.async writes alike.
// - A kStages-deep cp.async pipeline (16-byte copies, zero-filled past the
//   matrix through src-size): k-tiles t + 1 .. t + kStages - 1 are in flight
//   from L2/HBM while k-tile t is multiplied; one __syncthreads a k-tile.
// - Fragments double-buffered in registers: the ldmatrix of k-step k + 1 is
//   issued before the mmas of k-step k, across the k-tile boundary too.
// - Grid in groups of kGroupRows tile-rows (L2 reuse of A and B strips).
// - Epilogue through a per-warp shared-memory strip: 8-byte coalesced stores
//   and one copy of the activation code instead of 128.
//
// Arithmetic: per k-tile a block moves (BM + BN) x BK x 2 bytes for 2 x BM x
// BN x BK FLOP: (BM + BN) / (BM x BN) byte per FLOP = 0.0117 B/FLOP for
// 128 x 256 (Large), 0.0156 for 128 x 128 (Small), all through L2.
//
// Tails: rows past M / N and k past K are zero-filled by the copies (a
// partial 16-byte chunk copies its valid elements and zero-fills the rest);
// the epilogue masks its stores. Operands that break 16-byte alignment go
// through a synchronous copy of 2-byte loads instead (kAligned = false):
// correct, not fast; gemm_cuda.cu may prefer an aligned copy.
//
// Measured (H200, benchmarks/results/tensor-core_h200.json, first version): bf16
// 4096^3 0.56x cuBLAS (~415 TFLOP/s), 8192^3 0.61x; the wgmma rung is the
// Hopper path, this one is for GPUs without it.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "common/activation.h"
#include "gemm/half_gemm.h"
#include "gemm/kernels/half_convert.cuh"
#include "gemm/kernels/tile_order.cuh"

namespace memopt {
namespace mma_sm80 {

constexpr int kChunkBytes = 16;  // one cp.async, one ldmatrix row: 8 elements
constexpr int kChunkElems = 8;

// One operand's k-tile as stored in shared memory: kRows rows of kRowElems
// contiguous 16-bit elements (A: BM rows of BK k; linear's W: BN rows of BK
// k; gemm's B: BK rows of BN n), copied by kThreads threads one 16-byte chunk
// each per pass. Thread t copies chunk t % kRowChunks of rows t / kRowChunks
// + i x kRowsPerPass.
template <int kRows, int kRowElems, int kThreads>
struct TileShape {
  static constexpr int kRowChunks = kRowElems / kChunkElems;
  static constexpr int kRowBytes = kRowElems * 2;
  static constexpr int kBytes = kRows * kRowBytes;
  static constexpr int kRowsPerPass = kThreads / kRowChunks;
  static constexpr int kChunksPerThread = kRows / kRowsPerPass;
  // The swizzle: chunks of a row are permuted by an XOR with f(row); the 8
  // rows an ldmatrix matrix reads (8 consecutive rows at one logical chunk)
  // then land on 8 distinct 16-byte positions of the 128-byte bank line.
  // Rows of >= 128 bytes: XOR the low 3 chunk bits with row % 8. Shorter rows
  // share a 128-byte line (kRowsPerLine of them): XOR with the line number,
  // over the chunk bits a row owns.
  static constexpr int kRowsPerLine = kRowChunks >= 8 ? 1 : 8 / kRowChunks;
  static constexpr int kXorMask = (kRowChunks >= 8 ? 8 : kRowChunks) - 1;
  static_assert(kRowElems % kChunkElems == 0, "rows are whole 16-byte chunks");
  static_assert(kRowChunks >= 8 ? kRowChunks % 8 == 0 : 8 % kRowChunks == 0,
                "the swizzle permutes chunks inside 128-byte bank lines");
  static_assert(kThreads % kRowChunks == 0, "every thread copies the same chunk of its rows");
  static_assert(kRowsPerPass % 8 == 0,
                "a pass advances rows by a multiple of 8: the swizzle phase, so a thread's "
                "chunks sit a constant kThreads x 16 bytes apart");
  static_assert(kRows % kRowsPerPass == 0, "the tile is a whole number of copy passes");
  static_assert(kRows % 16 == 0, "ldmatrix reads rows in groups of 16 (two 8x8 matrices)");

  // Byte offset of logical chunk `chunk` of row `row` inside the tile.
  static __device__ __forceinline__ int offset(int row, int chunk) {
    return row * kRowBytes + ((chunk ^ ((row / kRowsPerLine) & kXorMask)) * kChunkBytes);
  }
};

// A shape of the rung: block tile, k-tile, warps along m and n, pipeline
// stages, blocks per SM (__launch_bounds__: the register budget is 64K /
// (kThreads x kMinBlocks) a thread, at most 255).
template <int kBlockM_, int kBlockN_, int kBlockK_, int kWarpsM_, int kWarpsN_, int kStages_,
          int kMinBlocks_>
struct Config {
  static constexpr int kBlockM = kBlockM_, kBlockN = kBlockN_, kBlockK = kBlockK_;
  static constexpr int kWarpsM = kWarpsM_, kWarpsN = kWarpsN_;
  static constexpr int kThreads = kWarpsM * kWarpsN * 32;
  static constexpr int kWarpM = kBlockM / kWarpsM, kWarpN = kBlockN / kWarpsN;
  static constexpr int kMmaM = kWarpM / 16;  // m16 tiles of a warp
  static constexpr int kMmaN = kWarpN / 8;   // n8 tiles of a warp
  static constexpr int kKSteps = kBlockK / 16;
  static constexpr int kStages = kStages_;
  static constexpr int kMinBlocks = kMinBlocks_;
  // Dynamic shared memory: kStages x (A tile + B tile) of 16-bit elements.
  static constexpr int kSmemBytes = kStages * (kBlockM + kBlockN) * kBlockK * 2;
  static_assert(kSmemBytes <= 99 * 1024,
                "fits the smallest sm_80+ opt-in shared memory (99 KB on sm_86 / sm_89)");
  static_assert(kBlockM % kWarpsM == 0 && kBlockN % kWarpsN == 0, "warps tile the block");
  static_assert(kWarpM % 16 == 0, "ldmatrix.x4 loads A 16 rows at a time (one m16 tile)");
  static_assert(kWarpN % 16 == 0, "ldmatrix.x4 loads B 16 columns at a time (two n8 tiles)");
  static_assert(kBlockK % 16 == 0, "mma.m16n8k16 consumes k 16 at a time");
  static_assert(kKSteps % 2 == 0, "k-step 0 of every k-tile uses fragment buffer 0");
  static_assert(kStages >= 3, "wait_group<kStages - 2> keeps at least one k-tile in flight");
};

// 128 x 256 x 32, 8 warps of 64 x 64, 4 stages: 96 KB of shared memory, one
// block an SM (128 fp32 accumulators + 64 fragment registers a thread). 96
// KB is under the smallest sm_80+ opt-in limit (99 KB on sm_86 / sm_89).
using Large = Config<128, 256, 32, 2, 4, 4, 1>;
// 128 x 128 x 32, 4 warps of the same 64 x 64, 4 stages: 64 KB, two blocks an
// SM (128 threads x <= 255 registers x 2 fits the 64K register file; 8 warps
// of 64 x 32 under the 128-register cap of two 256-thread blocks spilled).
// For grids under one Large tile per SM.
using Small = Config<128, 128, 32, 2, 2, 4, 2>;

// ---- PTX wrappers: one instruction each ----

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte asynchronous copy, every byte inside the matrix. .cg: cached in L2
// only, the data is used once from shared memory.
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}

// The same copying `src_bytes` (0-16) and zero-filling the rest; with 0 it
// reads nothing.
__device__ __forceinline__ void cp_async_16_zfill(uint32_t dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

__device__ __forceinline__ void st_shared_16(uint32_t dst, const uint32_t (&v)[4]) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(v[0]), "r"(v[1]),
               "r"(v[2]), "r"(v[3])
               : "memory");
}

// Four 8x8 matrices of 16-bit elements: lane i gives the address of row i % 8
// of matrix i / 8; register j receives, in every lane l, elements
// 2 (l % 4), 2 (l % 4) + 1 of row l / 4 of matrix j (of its transpose with
// .trans).
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// The element type's mma, beside its conversions and output pair
// (half_convert.cuh).
template <typename T>
struct Half;

template <>
struct Half<__nv_bfloat16> : HalfConvert<__nv_bfloat16> {
  static __device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4],
                                             const uint32_t (&b)[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};

template <>
struct Half<__half> : HalfConvert<__half> {
  static __device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4],
                                             const uint32_t (&b)[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};

// ---- copies of one 16-byte chunk (8 elements) into shared memory ----

// All 8 elements inside the matrix. kAligned: src is 16-byte aligned (one
// cp.async); otherwise 8 two-byte loads and one 16-byte shared store.
template <bool kAligned>
__device__ __forceinline__ void copy_chunk(uint32_t dst, const uint16_t* src) {
  if constexpr (kAligned) {
    cp_async_16(dst, src);
  } else {
    uint32_t v[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) v[e] = src[2 * e] | (static_cast<uint32_t>(src[2 * e + 1]) << 16);
    st_shared_16(dst, v);
  }
}

// The first `valid` (0-8) elements from src, zeros after; src is only read
// when valid > 0. A chunk cut by the operand's end (0 < valid < 8) takes the
// two-byte loads even when aligned: compute-sanitizer's memcheck counts a
// zero-filling cp.async as a 16-byte read whatever its source size, so a
// [*, 257] fp16 operand's last chunk was an "invalid read" past the
// allocation (the fuzz under memcheck, 2026-12-02). Only edge chunks pay.
template <bool kAligned>
__device__ __forceinline__ void copy_chunk_checked(uint32_t dst, const uint16_t* src, int valid) {
  if (kAligned && (valid == 0 || valid == 8)) {
    cp_async_16_zfill(dst, src, valid * 2);
  } else {
    uint32_t v[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const uint32_t lo = 2 * e < valid ? src[2 * e] : 0u;
      const uint32_t hi = 2 * e + 1 < valid ? src[2 * e + 1] : 0u;
      v[e] = lo | (hi << 16);
    }
    st_shared_16(dst, v);
  }
}

// One thread's share of copying an operand's k-tiles, planned once for the K
// loop: the global address of its first chunk, advanced by a k-tile each
// call (its other chunks are whole passes of rows further), and the bounds
// facts that do not change along K. kKInRows: the operand's rows are k
// (gemm's B [K, N]); otherwise its rows are m or n and k runs along them (A,
// linear's W). The tail facts ride along the address, so the checked copy
// adds a few integer instructions and no registers to the K loop (an earlier
// version recomputing row x stride there took ~30 registers and spilled).
template <typename Shape, bool kKInRows, bool kAligned>
struct TileCopy {
  static constexpr int kChunks = Shape::kChunksPerThread;
  // The synchronous copy (kAligned false) goes one chunk at a time: unrolled,
  // ptxas hoisted all 8 x kChunks loads of both operands and spilled.
  static constexpr int kUnroll = kAligned ? kChunks : 1;
  const uint16_t* src;  // chunk 0 of the current k-tile
  int64_t pass_stride;  // elements from chunk i to chunk i + 1: kRowsPerPass rows
  // kKInRows: elements of this thread's chunks inside the columns (0-8);
  // otherwise bit i set when the row of chunk i is inside the operand.
  uint32_t inside;

  // base[row * stride + col] is the operand; the block's tile starts at
  // `outer0` along the dimension that is not k (m or n), of extent `outer`.
  // 64-bit offsets: row x stride can pass 2^31.
  __device__ __forceinline__ TileCopy(const uint16_t* base, int64_t stride, int64_t outer0,
                                      int64_t outer)
      : pass_stride(Shape::kRowsPerPass * stride) {
    const int r = threadIdx.x / Shape::kRowChunks, c = threadIdx.x % Shape::kRowChunks;
    if constexpr (kKInRows) {
      const int64_t col = outer0 + c * kChunkElems;
      const int64_t left = outer - col;
      inside = left <= 0 ? 0u : left >= kChunkElems ? kChunkElems : static_cast<uint32_t>(left);
      src = base + r * stride + (inside > 0 ? col : 0);
    } else {
      inside = 0;
#pragma unroll
      for (int i = 0; i < kChunks; ++i) {
        inside |= static_cast<uint32_t>(outer0 + r + i * Shape::kRowsPerPass < outer) << i;
      }
      // Chunk 0's row, or row 0 when it lies outside (never read then).
      src = base + ((inside & 1u) ? (outer0 + r) * stride : 0) + c * kChunkElems;
    }
  }

  // Byte offset of this thread's chunk i inside the tile. Rows a pass apart
  // keep their swizzle phase (TileShape's static_assert): a constant stride.
  static __device__ __forceinline__ int dst(int i) {
    const int r = threadIdx.x / Shape::kRowChunks, c = threadIdx.x % Shape::kRowChunks;
    return Shape::offset(r, c) + i * Shape::kRowsPerPass * Shape::kRowBytes;
  }

  // A k-tile wholly inside the operand: no checks, no size operands.
  __device__ __forceinline__ void copy_full(uint32_t tile, int64_t step) {
#pragma unroll(kUnroll)
    for (int i = 0; i < kChunks; ++i) copy_chunk<kAligned>(tile + dst(i), src + i * pass_stride);
    src += step;
  }

  // A k-tile with `k_left` (1 .. BK) of its k inside K, or rows / columns
  // outside the operand: zeros there. `base` is read instead of an outside
  // source (a valid address; a zero-size copy reads nothing).
  __device__ __forceinline__ void copy_partial(uint32_t tile, int k_left, int64_t step,
                                               const uint16_t* base) {
    const int r = threadIdx.x / Shape::kRowChunks, c = threadIdx.x % Shape::kRowChunks;
    const int k_in_chunk = k_left - c * kChunkElems;  // kKInRows false: k of this chunk inside K
#pragma unroll(kUnroll)
    for (int i = 0; i < kChunks; ++i) {
      int valid;
      if constexpr (kKInRows) {
        valid = r + i * Shape::kRowsPerPass < k_left ? static_cast<int>(inside) : 0;
      } else {
        valid = (inside >> i) & 1u ? max(0, min(k_in_chunk, kChunkElems)) : 0;
      }
      copy_chunk_checked<kAligned>(tile + dst(i), valid > 0 ? src + i * pass_stride : base, valid);
    }
    src += step;
  }
};

// Four consecutive outputs of row m from column n: bias, activation, one
// 8-byte store when the row keeps it aligned (N % 4 == 0, out 8-byte
// aligned; `out` comes from the allocator) and all four are inside N, else
// 4-byte pairs or single elements, masked at the N tail.
template <typename T>
__device__ __forceinline__ void store_four(const HalfGemmArgs& p, int64_t m, int64_t n,
                                           float4 v, const float (&bias)[4]) {
  using Pair = typename Half<T>::Pair;
  struct alignas(8) Quad { Pair lo, hi; };
  const float r0 = apply_activation(p.act, v.x + bias[0]);
  const float r1 = apply_activation(p.act, v.y + bias[1]);
  const float r2 = apply_activation(p.act, v.z + bias[2]);
  const float r3 = apply_activation(p.act, v.w + bias[3]);
  T* dst = static_cast<T*>(p.out) + m * p.N + n;
  const uintptr_t address = reinterpret_cast<uintptr_t>(p.out);
  if (n + 3 < p.N && p.N % 4 == 0 && address % 8 == 0) {
    *reinterpret_cast<Quad*>(dst) = Quad{Half<T>::round_pair(r0, r1), Half<T>::round_pair(r2, r3)};
  } else if (n + 3 < p.N && p.N % 2 == 0 && address % 4 == 0) {
    reinterpret_cast<Pair*>(dst)[0] = Half<T>::round_pair(r0, r1);
    reinterpret_cast<Pair*>(dst)[1] = Half<T>::round_pair(r2, r3);
  } else {
    const float r[4] = {r0, r1, r2, r3};
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      if (n + e < p.N) dst[e] = Half<T>::round(r[e]);
    }
  }
}

// Epilogue of one warp: its kWarpM x kWarpN accumulators (from row m0,
// column n0 of out) go through a private shared-memory strip one m16 tile at
// a time, so each lane ends up with 4 consecutive columns of a row: 8-byte
// stores, a row of the warp tile written by consecutive lanes, and the
// activation in a rolled loop (unrolled over all 128 accumulators it made
// each kernel 4x its size: 43K SASS instructions, most of them erff / tanhf).
// The mma's fp32 fragment of m16 tile i, n8 tile j: lane l holds rows l / 4
// and l / 4 + 8, columns 2 (l % 4) and 2 (l % 4) + 1, in acc[i][j][0..1] and
// [2..3].
template <typename Cfg, typename T>
__device__ __forceinline__ void store_tile(const HalfGemmArgs& p,
                                           const float (&acc)[Cfg::kMmaM][Cfg::kMmaN][4],
                                           float* smem, int64_t m0, int64_t n0) {
  constexpr int kWarpN = Cfg::kWarpN;
  // + 8 floats a row: the fragment's float2 writes (8 rows x 4 lanes a
  // half-warp) cover the 32 banks once; 16-byte aligned rows for the reads.
  constexpr int kPitch = kWarpN + 8;
  constexpr int kLanesPerRow = kWarpN / 4, kRowsPerPass = 32 / kLanesPerRow;
  static_assert(32 % kLanesPerRow == 0 && 16 % kRowsPerPass == 0,
                "a warp reads whole rows of 4-column groups of its m16 strip");
  static_assert(Cfg::kThreads / 32 * 16 * kPitch * 4 <= Cfg::kSmemBytes,
                "the staging strips fit in the pipeline's shared memory");
  const int lane = threadIdx.x % 32;
  float* strip = smem + (threadIdx.x / 32) * 16 * kPitch;  // (16 rows, kWarpN columns)
  const int col = (lane % kLanesPerRow) * 4;
  const int64_t n = n0 + col;
  const T* bias_ptr = static_cast<const T*>(p.bias);
  float bias[4];
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    bias[e] = bias_ptr != nullptr && n + e < p.N ? Half<T>::to_float(bias_ptr[n + e]) : 0.f;
  }
#pragma unroll
  for (int i = 0; i < Cfg::kMmaM; ++i) {
#pragma unroll
    for (int j = 0; j < Cfg::kMmaN; ++j) {
      float* at = strip + (lane / 4) * kPitch + 8 * j + 2 * (lane % 4);
      *reinterpret_cast<float2*>(at) = make_float2(acc[i][j][0], acc[i][j][1]);
      *reinterpret_cast<float2*>(at + 8 * kPitch) = make_float2(acc[i][j][2], acc[i][j][3]);
    }
    __syncwarp();
#pragma unroll 1
    for (int r = lane / kLanesPerRow; r < 16; r += kRowsPerPass) {
      const int64_t m = m0 + 16 * i + r;
      const float4 v = *reinterpret_cast<const float4*>(strip + r * kPitch + col);
      if (m < p.M && n < p.N) store_four<T>(p, m, n, v, bias);
    }
    __syncwarp();  // the strip is rewritten by tile i + 1
  }
}

// out = act(A B + bias) for the block's kBlockM x kBlockN tile. kBKMajor: B
// is linear's W [N, K] (stored as BN rows of BK k, read by ldmatrix);
// otherwise gemm's B [K, N] (stored as BK rows of BN n, read by
// ldmatrix.trans). kAligned: both operands allow 16-byte cp.async.
template <typename Cfg, typename T, bool kBKMajor, bool kAligned>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    gemm_mma_kernel(const HalfGemmArgs p) {
  constexpr int kBlockM = Cfg::kBlockM, kBlockN = Cfg::kBlockN, kBlockK = Cfg::kBlockK;
  constexpr int kThreads = Cfg::kThreads, kStages = Cfg::kStages, kKSteps = Cfg::kKSteps;
  constexpr int kMmaM = Cfg::kMmaM, kMmaN = Cfg::kMmaN;
  using TileA = TileShape<kBlockM, kBlockK, kThreads>;  // (m, k)
  using TileB = std::conditional_t<kBKMajor, TileShape<kBlockN, kBlockK, kThreads>,   // (n, k)
                                   TileShape<kBlockK, kBlockN, kThreads>>;           // (k, n)
  constexpr int kStageBytes = TileA::kBytes + TileB::kBytes;
  static_assert(TileA::kBytes % 128 == 0, "B's tile starts on a 128-byte bank line");
  static_assert(kStages * kStageBytes == Cfg::kSmemBytes, "the launcher sizes what the stages use");

  extern __shared__ __align__(128) unsigned char smem[];  // (stage) x {A tile, B tile}
  const uint32_t smem_base = smem_addr(smem);
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  const int warp_m = warp / Cfg::kWarpsN, warp_n = warp % Cfg::kWarpsN;

  int64_t tile_m, tile_n;
  grouped_tile(blockIdx.x, (p.M + kBlockM - 1) / kBlockM, (p.N + kBlockN - 1) / kBlockN, tile_m,
               tile_n);
  const int64_t m0 = tile_m * kBlockM, n0 = tile_n * kBlockN;
  const int num_tiles = static_cast<int>((p.K + kBlockK - 1) / kBlockK);
  const uint16_t* a = static_cast<const uint16_t*>(p.a);
  const uint16_t* b = static_cast<const uint16_t*>(p.b);

  // A block whose output tile lies inside M x N copies its whole k-tiles
  // (all but a K tail) without checks or zero-fill sizes; edge blocks and the
  // last partial k-tile take the checked copy.
  const bool interior = m0 + kBlockM <= p.M && n0 + kBlockN <= p.N;
  const int full_tiles = interior ? static_cast<int>(p.K / kBlockK) : 0;
  TileCopy<TileA, false, kAligned> copy_a(a, p.a_stride_m, m0, p.M);
  // W: rows n, k along them; B [K, N]: rows k (from 0), columns n.
  TileCopy<TileB, !kBKMajor, kAligned> copy_b(b, p.b_stride, n0, p.N);
  const int64_t b_step = kBKMajor ? kBlockK : kBlockK * p.b_stride;

  // Copies k-tile `tile` into `stage`; one commit group per call, empty past
  // the last k-tile, so wait_group counts k-tiles.
  const auto issue_tile = [&](int tile, int stage) {
    const uint32_t tile_a = smem_base + stage * kStageBytes, tile_b = tile_a + TileA::kBytes;
    if (tile < full_tiles) {
      copy_a.copy_full(tile_a, kBlockK);
      copy_b.copy_full(tile_b, b_step);
    } else if (tile < num_tiles) {
      const int64_t k_left = p.K - static_cast<int64_t>(tile) * kBlockK;
      const int k_in = k_left < kBlockK ? static_cast<int>(k_left) : kBlockK;
      copy_a.copy_partial(tile_a, k_in, kBlockK, a);
      copy_b.copy_partial(tile_b, k_in, b_step, b);
    }
    cp_async_commit();
  };

  // ldmatrix addresses of this lane, as offsets inside a stage. A (m16 tile
  // i, k-step kk): lanes 0-15 give rows 0-15 at k chunk 2 kk, lanes 16-31 the
  // same rows at chunk 2 kk + 1: matrices (rows 0-7, k 0-7), (8-15, 0-7),
  // (0-7, 8-15), (8-15, 8-15) = the mma's a0..a3. Tile i is 16 rows further:
  // same swizzle phase, a constant offset.
  int a_frag[kKSteps];
#pragma unroll
  for (int kk = 0; kk < kKSteps; ++kk) {
    a_frag[kk] = TileA::offset(warp_m * Cfg::kWarpM + lane % 16, 2 * kk + lane / 16);
  }
  // B (pair j of n8 tiles, k-step kk): matrix q = lane / 8 is (n 0-7, k 0-7),
  // (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15) = b0, b1 of n8 tile
  // 2j, b0, b1 of tile 2j + 1. W's tile holds n in rows: rows n, chunk by k
  // (a constant offset per pair j). B's tile holds k in rows: rows k, chunk
  // by n, read transposed (a constant offset per k-step).
  constexpr int kPairsN = kMmaN / 2;
  constexpr int kBFragOffsets = kBKMajor ? kKSteps : kPairsN;
  int b_frag[kBFragOffsets];
  const int q = lane / 8;
#pragma unroll
  for (int x = 0; x < kBFragOffsets; ++x) {
    if constexpr (kBKMajor) {  // x = kk
      b_frag[x] = TileB::offset(warp_n * Cfg::kWarpN + lane % 8 + (q / 2) * 8, 2 * x + q % 2);
    } else {  // x = j
      b_frag[x] =
          TileB::offset(lane % 8 + (q % 2) * 8, (warp_n * Cfg::kWarpN + 16 * x) / 8 + q / 2);
    }
  }
  const auto b_frag_offset = [&](int j, int kk) {
    return kBKMajor ? b_frag[kk] + j * 16 * TileB::kRowBytes
                    : b_frag[j] + kk * 16 * TileB::kRowBytes;
  };

  float acc[kMmaM][kMmaN][4] = {};
  uint32_t frag_a[2][kMmaM][4], frag_b[2][kMmaN][2];
  const auto load_fragments = [&](int stage, int kk, int buf) {
    const uint32_t tile_a = smem_base + stage * kStageBytes, tile_b = tile_a + TileA::kBytes;
#pragma unroll
    for (int i = 0; i < kMmaM; ++i) {
      ldmatrix_x4(frag_a[buf][i], tile_a + a_frag[kk] + i * 16 * TileA::kRowBytes);
    }
#pragma unroll
    for (int j = 0; j < kPairsN; ++j) {
      uint32_t r[4];
      if constexpr (kBKMajor) {
        ldmatrix_x4(r, tile_b + b_frag_offset(j, kk));
      } else {
        ldmatrix_x4_trans(r, tile_b + b_frag_offset(j, kk));
      }
      frag_b[buf][2 * j][0] = r[0], frag_b[buf][2 * j][1] = r[1];
      frag_b[buf][2 * j + 1][0] = r[2], frag_b[buf][2 * j + 1][1] = r[3];
    }
  };

  // Prologue: k-tiles 0 .. kStages - 2 in flight, wait for k-tile 0.
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) issue_tile(s, s);
  cp_async_wait<kStages - 2>();
  __syncthreads();
  load_fragments(0, 0, 0);
  int read_stage = 0, write_stage = kStages - 1;
  for (int tile = 0; tile < num_tiles; ++tile) {
#pragma unroll
    for (int kk = 0; kk < kKSteps; ++kk) {
      if (kk + 1 < kKSteps) {
        load_fragments(read_stage, kk + 1, (kk + 1) % 2);
      } else {
        // Issued so far: k-tiles up to tile + kStages - 1; tile + 1 must have
        // landed, kStages - 2 younger ones may still fly. The barrier also
        // marks every thread done reading read_stage's last fragments
        // (loaded one k-step ago), which the next issue_tile overwrites.
        cp_async_wait<kStages - 2>();
        __syncthreads();
        read_stage = read_stage + 1 == kStages ? 0 : read_stage + 1;
        // Past the last k-tile this reads a stale stage that no mma uses.
        load_fragments(read_stage, 0, 0);
      }
      if (kk == 0) {
        // Into the stage of k-tile tile - 1, free since the last barrier.
        issue_tile(tile + kStages - 1, write_stage);
        write_stage = write_stage + 1 == kStages ? 0 : write_stage + 1;
      }
#pragma unroll
      for (int i = 0; i < kMmaM; ++i) {
#pragma unroll
        for (int j = 0; j < kMmaN; ++j) {
          Half<T>::mma(acc[i][j], frag_a[kk % 2][i], frag_b[kk % 2][j]);
        }
      }
    }
  }
  cp_async_wait<0>();  // no copy may outlive the block (the trailing groups are empty)
  __syncthreads();     // every warp is done with the stages the staging area reuses
  store_tile<Cfg, T>(p, acc, reinterpret_cast<float*>(smem), m0 + warp_m * Cfg::kWarpM,
                     n0 + warp_n * Cfg::kWarpN);
}

}  // namespace mma_sm80
}  // namespace memopt
