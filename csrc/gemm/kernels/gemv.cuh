// Rung "gemv" of the bfloat16 / float16 GEMM: skinny M (decode: M tokens,
// tuned for 1..64; N output features, K input features). Launcher and the
// shapes it picks: gemm/gemv.cu.
//
// The bottleneck it removes: at small M the product is a stream of the weight
// matrix. Bytes: N*K*2 of weights, read once, against 2*M*N*K FLOP: 1/M bytes
// per FLOP (1 at M = 1, 1/64 at M = 64). The H200 copies 4.2 TB/s; mma.sync
// should sustain a few hundred TFLOP/s (cuBLAS's wgmma reaches 722), so with
// tensor cores the shape stays bandwidth-bound past M = 64, while on CUDA
// cores (~60 TFLOP/s) it turns arithmetic-bound at M ~ 14: M = 64 at 4096^2 is
// 2.1 GFLOP = 35 us on CUDA cores against 8 us of weights at copy speed. A
// square-tile GEMM wastes 127/128 of a 128-row tile at M = 1 and launches too
// few blocks to keep HBM busy: cuBLAS reads the weights at 1.8 TB/s at
// 1 x 4096 x 4096 (18.4 us).
//
// What it does instead:
// - Swapped operands: out^T = W x^T. Weight rows (n) are the 16-row A side of
//   mma.m16n8k16, tokens its 8-column B side: M = 1 wastes 7/8 of a cheap mma,
//   M = 64 is 8 full n8 tiles.
// - Fragments straight from global memory, no shared memory in the loop: the
//   k order inside one mma is free as long as A and B agree, so each lane's
//   16-byte load of 8 consecutive k is its A (and B) registers as loaded
//   (k-major W) or after byte-permutes (row-major B); see KMajor, RowMajor.
// - Split-K inside a block: kWarpsK warps walk interleaved k-steps of the same
//   rows, kBatch steps of loads in flight at once (8 x 16 bytes a lane up to
//   M = 32, 4 at M = 64), then add their sums in a fixed tree in shared
//   memory (deterministic).
// - Split-K across blocks only when the grid holds too few warps to keep HBM
//   busy (M = 64 at N = 4096; the row-major layout): fp32 partials in a
//   stream-ordered workspace; the last block of a tile (a counter) adds them
//   in split order and runs the epilogue. No second kernel.
// - x (at most 64 x 4096 x 2 = 512 KB) through L1: the kWarpsN warps of a
//   block that share a k-step read the same x bytes, and a block covers
//   kWarpsN x 16 >= M rows (up to 64) so x crosses L2 at most once per weight
//   byte. Weights bypass L1 (ld.global.nc.L1::no_allocate) to leave it to x.
//
// Measured (H200, bf16 linear, benchmarks/results/tensor-core_h200.json, first
// version): M = 1 at 1.94 TB/s of weights (46% of the 4.25 TB/s copy; 1.07x
// cuBLAS) at N = K = 4096 and 2.79 TB/s at N = 11008; M = 8 / 16 1.02-1.13x;
// M = 64 0.42-0.53x. Far under the estimate above: to be profiled.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "common/activation.h"

namespace memopt {
namespace gemv {

// ---------------------------------------------------------------- dtypes ---

// The two element types as raw 16-bit words: fp32 conversions and which mma.
struct Bf16 {
  static __device__ __forceinline__ float to_float(uint16_t bits) {
    return __uint_as_float(static_cast<uint32_t>(bits) << 16);
  }
  static __device__ __forceinline__ uint16_t from_float(float v) {
    return __bfloat16_as_ushort(__float2bfloat16_rn(v));
  }
};
struct Fp16 {
  static __device__ __forceinline__ float to_float(uint16_t bits) {
    return __half2float(__ushort_as_half(bits));
  }
  static __device__ __forceinline__ uint16_t from_float(float v) {
    return __half_as_ushort(__float2half_rn(v));
  }
};

// c += A (16 x 16, row) * B (16 x 8, col), fp32 accumulators. Lane (g, t) =
// (lane / 4, lane % 4) holds A rows g and g + 8 at k 2t, 2t+1 (a0, a1) and
// 2t+8, 2t+9 (a2, a3); B column g at the same k (b0, b1); C rows g, g + 8 at
// columns 2t, 2t+1 (c[0..1], c[2..3]). Low half of each word = lower k.
template <class Elem>
__device__ __forceinline__ void mma_16x8x16(float* c, uint32_t a0, uint32_t a1, uint32_t a2,
                                            uint32_t a3, uint32_t b0, uint32_t b1) {
  if constexpr (std::is_same_v<Elem, Bf16>) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  } else {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
}

// ----------------------------------------------------------------- loads ---

// 16 weight bytes, read once: the non-coherent path, no L1 allocation (L1 keeps
// x, which the block re-reads). kPrefetch256: ask L2 for the whole 256-byte
// block around them (k-major: the block's other warps read the rest of those
// 256 bytes of the row a moment later); otherwise 128 bytes (row-major: a
// warp reads exactly 128 bytes of a row, the next 128 belong to another block).
template <bool kPrefetch256>
__device__ __forceinline__ uint4 load_weights16(const uint16_t* p) {
  uint4 v;
  if constexpr (kPrefetch256) {
    asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];\n"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
  } else {
    asm("ld.global.nc.L1::no_allocate.L2::128B.v4.u32 {%0,%1,%2,%3}, [%4];\n"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
  }
  return v;
}

// 16 / 8 bytes of x: the non-coherent path, cached in L1 (re-read by the
// other warps of the block and by the other blocks of the SM).
__device__ __forceinline__ uint4 load_x16(const uint16_t* p) {
  uint4 v;
  asm("ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];\n"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p));
  return v;
}
__device__ __forceinline__ uint2 load_x8(const uint16_t* p) {
  uint2 v;
  asm("ld.global.nc.v2.u32 {%0,%1}, [%2];\n" : "=r"(v.x), "=r"(v.y) : "l"(p));
  return v;
}

// Word j of v (j a constant after unrolling: stays in registers).
__device__ __forceinline__ uint32_t word(const uint4& v, int j) {
  return j == 0 ? v.x : j == 1 ? v.y : j == 2 ? v.z : v.w;
}

__device__ __forceinline__ uint32_t pack2(uint16_t lo, uint16_t hi) {
  return static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16);
}

// Element j of p when j < valid, else 0 (valid may be <= 0).
__device__ __forceinline__ uint16_t load_or_zero(const uint16_t* p, int j, int64_t valid) {
  return j < valid ? __ldg(reinterpret_cast<const unsigned short*>(p) + j) : uint16_t{0};
}

// What a 16-byte load of load8 is: x (L1-cached) or weights (L1 bypassed)
// with a 256- or 128-byte L2 prefetch.
enum class Stream { x, weights256, weights128 };

// p[0 .. 7] packed as 4 words (low half = lower index), zero from `valid` on.
// kVec: one 16-byte load when all 8 are valid (the launcher checked that p is
// 16-byte aligned); otherwise 2-byte loads.
template <bool kVec, Stream kStream>
__device__ __forceinline__ uint4 load8(const uint16_t* p, int64_t valid) {
  if (kVec && valid >= 8) {
    if constexpr (kStream == Stream::x) return load_x16(p);
    return load_weights16<kStream == Stream::weights256>(p);
  }
  uint16_t e[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) e[j] = load_or_zero(p, j, valid);
  return make_uint4(pack2(e[0], e[1]), pack2(e[2], e[3]), pack2(e[4], e[5]), pack2(e[6], e[7]));
}

// p[0 .. 3] packed as 2 words, zero from `valid` on (8-byte load when kVec).
template <bool kVec>
__device__ __forceinline__ uint2 load4(const uint16_t* p, int64_t valid) {
  if (kVec && valid >= 4) return load_x8(p);
  uint16_t e[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) e[j] = load_or_zero(p, j, valid);
  return make_uint2(pack2(e[0], e[1]), pack2(e[2], e[3]));
}

// ---------------------------------------------------------- parameters ---

// HalfGemmArgs as the kernels read it, plus the grid decomposition. Blocks
// are numbered token block fastest, then n tile, then split: the token blocks
// of one n tile (M > one block's tokens) run side by side and share that
// tile's weights through L2.
struct Params {
  const uint16_t* a;  // x [M, K], row stride a_stride_m
  int64_t a_stride_m;
  const uint16_t* b;  // weights, layout per the kernel's Layout
  int64_t b_stride;
  const uint16_t* bias;  // [N] or nullptr
  uint16_t* out;         // [M, N] contiguous
  int64_t M, N, K;
  Activation act;
  int64_t token_blocks, n_tiles, splits;
  int64_t steps_per_split;  // k-steps (Layout::kStepK each) of one split
  float* partials;          // [splits, M, N] fp32 when splits > 1
  unsigned* tile_counters;  // [n_tiles * token_blocks], zeroed, when splits > 1
};

// ----------------------------------------------------------------- shape ---

// One shape of the rung. A block: kWarpsN x kWarpsK warps; covers kTokenTiles
// n8 tiles of tokens (8 each) and kWarpsN x kRowGroups row groups of
// Layout::kGroupN weight rows; the kWarpsK warps of a column split its k-steps,
// kBatch steps a lane loaded at once.
template <int kTokenTiles_, int kRowGroups_, int kWarpsN_, int kWarpsK_, int kBatch_,
          int kMinBlocks_>
struct Config {
  static constexpr int kTokenTiles = kTokenTiles_, kRowGroups = kRowGroups_;
  static constexpr int kWarpsN = kWarpsN_, kWarpsK = kWarpsK_, kBatch = kBatch_;
  static constexpr int kMinBlocks = kMinBlocks_;
  static constexpr int kThreads = 32 * kWarpsN * kWarpsK;
  static constexpr int kTokens = 8 * kTokenTiles;
  static_assert((kWarpsK & (kWarpsK - 1)) == 0,
                "the cross-warp reduction halves kWarpsK each round");
  static_assert(kThreads <= 1024, "one block holds at most 1024 threads");
};

// ---------------------------------------------------------- k-major W ---

// B[k, n] = W[n, k] at b[n * b_stride + k] (linear's weight). A step is 32 k of
// 16 rows: lane (g, t) loads W[n + g][k + 8t .. +7] and W[n + g + 8][same], 16
// bytes each. Word 0 of both (k 8t, 8t+1) and word 1 (8t+2, 8t+3) are the
// A registers of one mma, words 2, 3 those of a second: logical k (2t, 2t+1,
// 2t+8, 2t+9) is physical k 8t + (0 .. 3), then 8t + (4 .. 7), a bijection
// over the 4 lanes of a row. x[token g][k + 8t .. +7] (16 bytes) gives the B
// registers of both in the same order. Per warp and step: 1 KB of weights,
// 2 mma a token tile.
struct KMajor {
  static constexpr int kStepK = 32;
  static constexpr int kGroupN = 16;
  static constexpr int kAccPerTile = 4;  // one mma's C per (row group, token tile)

  // Accumulator c of (row group r, token tile tt): (row, token) inside the
  // warp tile.
  static __device__ __forceinline__ int acc_row(int r, int c, int lane) {
    return r * kGroupN + lane / 4 + 8 * (c >> 1);
  }
  static __device__ __forceinline__ int acc_token(int tt, int c, int lane) {
    return tt * 8 + 2 * (lane % 4) + (c & 1);
  }

  template <class Elem>
  static __device__ __forceinline__ void mma_step(float* c, uint4 row_g, uint4 row_g8, uint4 xv) {
    mma_16x8x16<Elem>(c, row_g.x, row_g8.x, row_g.y, row_g8.y, xv.x, xv.y);
    mma_16x8x16<Elem>(c, row_g.z, row_g8.z, row_g.w, row_g8.w, xv.z, xv.w);
  }

  // acc += this warp's rows x its k-steps step, step + kWarpsK, ... < step_end.
  template <class Cfg, class Elem, bool kVec>
  static __device__ __forceinline__ void accumulate(const Params& p, int64_t n_warp,
                                                    int64_t m_block, int64_t step,
                                                    int64_t step_end, int lane, float* acc) {
    constexpr int R = Cfg::kRowGroups, T = Cfg::kTokenTiles, U = Cfg::kBatch;
    constexpr int kWarpsK = Cfg::kWarpsK;
    const int g = lane / 4, t = lane % 4;
    // Pointers at this warp's first step, advanced as it walks: every load of
    // a batch is then pointer + a constant (an immediate offset in the LDG,
    // no address registers; 64-bit address math per load spilled at T = 8).
    // Rows past N and tokens past M read the last row instead (always in
    // bounds, no predicate in the loop): their outputs are never stored, and
    // an mma row or column only ever meets itself.
    const uint16_t* w_row[2 * R];
#pragma unroll
    for (int h = 0; h < 2 * R; ++h) {
      const int64_t n = min(n_warp + 16 * (h / 2) + 8 * (h % 2) + g, p.N - 1);
      w_row[h] = p.b + n * p.b_stride + step * kStepK + 8 * t;
    }
    const uint16_t* x_row[T];
#pragma unroll
    for (int tt = 0; tt < T; ++tt) {
      const int64_t m = min(m_block + 8 * tt + g, p.M - 1);
      x_row[tt] = p.a + m * p.a_stride_m + step * kStepK + 8 * t;
    }
    // Whole batches of full steps (every k < K): no bounds checks.
    constexpr int kNext = kWarpsK * kStepK;  // elements from one step of a warp to its next
    const int64_t full_end = min(step_end, p.K / kStepK);
    // unroll 1: kBatch alone sets the loads in flight (and the registers).
#pragma unroll 1
    for (; step + (U - 1) * kWarpsK < full_end; step += U * kWarpsK) {
      uint4 w[U][2 * R];
#pragma unroll
      for (int u = 0; u < U; ++u) {
#pragma unroll
        for (int h = 0; h < 2 * R; ++h) {
          w[u][h] = load8<kVec, Stream::weights256>(w_row[h] + u * kNext, 8);
        }
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
#pragma unroll
        for (int tt = 0; tt < T; ++tt) {
          const uint4 xv = load8<kVec, Stream::x>(x_row[tt] + u * kNext, 8);
#pragma unroll
          for (int r = 0; r < R; ++r) {
            mma_step<Elem>(acc + (r * T + tt) * kAccPerTile, w[u][2 * r], w[u][2 * r + 1], xv);
          }
        }
      }
#pragma unroll
      for (int h = 0; h < 2 * R; ++h) w_row[h] += U * kNext;
#pragma unroll
      for (int tt = 0; tt < T; ++tt) x_row[tt] += U * kNext;
    }
    // Leftover steps one at a time; the last may pass K (zeros there).
#pragma unroll 1
    for (; step < step_end; step += kWarpsK) {
      const int64_t valid = p.K - (step * kStepK + 8 * t);
      uint4 w[2 * R];
#pragma unroll
      for (int h = 0; h < 2 * R; ++h) w[h] = load8<kVec, Stream::weights256>(w_row[h], valid);
#pragma unroll
      for (int tt = 0; tt < T; ++tt) {
        const uint4 xv = load8<kVec, Stream::x>(x_row[tt], valid);
#pragma unroll
        for (int r = 0; r < R; ++r) {
          mma_step<Elem>(acc + (r * T + tt) * kAccPerTile, w[2 * r], w[2 * r + 1], xv);
        }
      }
#pragma unroll
      for (int h = 0; h < 2 * R; ++h) w_row[h] += kNext;
#pragma unroll
      for (int tt = 0; tt < T; ++tt) x_row[tt] += kNext;
    }
  }
};

// -------------------------------------------------------- row-major B ---

// B[k, n] at b[k * b_stride + n] (gemm's b [K, N]): N is contiguous, but an
// mma register pairs two k of one row n. A step is 16 k of 64 columns: lane
// (g, t) loads B[k + 4t + i][n + 8g .. +7] for i = 0..3 (16 bytes each; a warp
// reads 4 x 128 contiguous bytes a load). A byte-permute of the words j of
// loads 0 and 1 pairs k 4t, 4t+1 of columns 8g + 2j (low halves) and 8g + 2j + 1
// (high halves); loads 2 and 3 give k 4t+2, 4t+3. So mma j (j = 0..3) has
// A row g = column 8g + 2j and row g + 8 = column 8g + 2j + 1, logical k
// (2t, 2t+1, 2t+8, 2t+9) = physical 4t + (0 .. 3), and its B registers are
// x[token g][k + 4t .. +3] (8 bytes). Per warp and step: 2 KB of weights,
// 16 PRMT and 4 mma a token tile. No shared memory, no transposing pass.
struct RowMajor {
  static constexpr int kStepK = 16;
  static constexpr int kGroupN = 64;
  static constexpr int kAccPerTile = 16;  // 4 mma x 4 accumulators

  static __device__ __forceinline__ int acc_row(int r, int c, int lane) {
    return r * kGroupN + 8 * (lane / 4) + 2 * (c / 4) + ((c % 4) >> 1);
  }
  static __device__ __forceinline__ int acc_token(int tt, int c, int lane) {
    return tt * 8 + 2 * (lane % 4) + (c & 1);
  }

  template <class Elem>
  static __device__ __forceinline__ void mma_step(float* c, const uint4 (&w)[4], uint2 xv) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const uint32_t k0 = word(w[0], j), k1 = word(w[1], j), k2 = word(w[2], j), k3 = word(w[3], j);
      // 0x5410: the low halves of (x, y); 0x7632: the high halves.
      mma_16x8x16<Elem>(c + 4 * j, __byte_perm(k0, k1, 0x5410), __byte_perm(k0, k1, 0x7632),
                        __byte_perm(k2, k3, 0x5410), __byte_perm(k2, k3, 0x7632), xv.x, xv.y);
    }
  }

  // The 4 loads of one step (rows k_lane .. k_lane + 3 at w, w + b_stride,
  // ...). kChecked: rows past K and columns past N (n_valid of this lane's 8
  // remain) read as zeros.
  template <bool kVec, bool kChecked>
  static __device__ __forceinline__ void load_step(const Params& p, const uint16_t* w,
                                                   int64_t k_lane, int64_t n_valid,
                                                   uint4 (&rows)[4]) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int64_t valid = !kChecked ? 8 : (k_lane + i < p.K ? n_valid : 0);
      rows[i] = load8<kVec, Stream::weights128>(w + i * p.b_stride, valid);
    }
  }

  // acc += this warp's 64 columns x its steps; w, x_row at its first step.
  template <class Cfg, class Elem, bool kVec, bool kChecked>
  static __device__ __forceinline__ void steps(const Params& p, const uint16_t* w,
                                               const uint16_t* (&x_row)[Cfg::kTokenTiles],
                                               int64_t n_valid, int64_t step, int64_t step_end,
                                               int t, float* acc) {
    constexpr int T = Cfg::kTokenTiles, U = Cfg::kBatch, kWarpsK = Cfg::kWarpsK;
    constexpr int kNextX = kWarpsK * kStepK;           // x elements from a step to the next
    const int64_t next_w = kWarpsK * kStepK * p.b_stride;  // weight elements, likewise
    // Whole batches of full steps (every k < K), in warps inside N only: the
    // edge warps take the checked single steps below (their scalar fallback
    // loads would not fit the registers of a batch).
    const int64_t full_end = kChecked ? step : min(step_end, p.K / kStepK);
    // unroll 1: kBatch alone sets the loads in flight (and the registers).
#pragma unroll 1
    for (; step + (U - 1) * kWarpsK < full_end; step += U * kWarpsK) {
      uint4 rows[U][4];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        load_step<kVec, false>(p, w + u * next_w, 0, 8, rows[u]);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
#pragma unroll
        for (int tt = 0; tt < T; ++tt) {
          mma_step<Elem>(acc + tt * kAccPerTile, rows[u], load4<kVec>(x_row[tt] + u * kNextX, 4));
        }
      }
      w += U * next_w;
#pragma unroll
      for (int tt = 0; tt < T; ++tt) x_row[tt] += U * kNextX;
    }
    // Leftover steps one at a time; the last may pass K.
#pragma unroll 1
    for (; step < step_end; step += kWarpsK) {
      const int64_t k_lane = step * kStepK + 4 * t;
      uint4 rows[4];
      load_step<kVec, true>(p, w, k_lane, n_valid, rows);
#pragma unroll
      for (int tt = 0; tt < T; ++tt) {
        mma_step<Elem>(acc + tt * kAccPerTile, rows, load4<kVec>(x_row[tt], p.K - k_lane));
      }
      w += next_w;
#pragma unroll
      for (int tt = 0; tt < T; ++tt) x_row[tt] += kNextX;
    }
  }

  template <class Cfg, class Elem, bool kVec>
  static __device__ __forceinline__ void accumulate(const Params& p, int64_t n_warp,
                                                    int64_t m_block, int64_t step,
                                                    int64_t step_end, int lane, float* acc) {
    constexpr int T = Cfg::kTokenTiles;
    static_assert(Cfg::kRowGroups == 1, "a row-major warp covers one 64-column group");
    const int g = lane / 4, t = lane % 4;
    const int64_t n_lane = n_warp + 8 * g;
    const int64_t n_valid = p.N - n_lane;  // columns of this lane inside N (<= 0: none)
    // Row k = step * 16 + 4t of this lane's 8 columns; columns past N are
    // never dereferenced, so the pointer needs no clamp.
    const uint16_t* w = p.b + (step * kStepK + 4 * t) * p.b_stride + n_lane;
    const uint16_t* x_row[T];
#pragma unroll
    for (int tt = 0; tt < T; ++tt) {
      const int64_t m = min(m_block + 8 * tt + g, p.M - 1);
      x_row[tt] = p.a + m * p.a_stride_m + step * kStepK + 4 * t;
    }
    // Warps whose columns all lie inside N take the unchecked loop.
    if (n_warp + kGroupN <= p.N) {
      steps<Cfg, Elem, kVec, false>(p, w, x_row, n_valid, step, step_end, t, acc);
    } else {
      steps<Cfg, Elem, kVec, true>(p, w, x_row, n_valid, step, step_end, t, acc);
    }
  }
};

// ---------------------------------------------------------------- kernel ---

template <class Elem>
__device__ __forceinline__ uint16_t finish(const Params& p, int64_t n, float v) {
  if (p.bias != nullptr) v += Elem::to_float(p.bias[n]);
  return Elem::from_float(apply_activation(p.act, v));
}

template <class Layout, class Cfg>
struct Tile {
  static constexpr int kAcc = Cfg::kRowGroups * Cfg::kTokenTiles * Layout::kAccPerTile;
  static constexpr int kWarpN = Cfg::kRowGroups * Layout::kGroupN;  // weight rows of a warp
  static constexpr int kBlockN = Cfg::kWarpsN * kWarpN;
  // The first reduction round parks half the warps' accumulators.
  static constexpr int kReduceFloats = (Cfg::kWarpsK / 2) * Cfg::kWarpsN * kAcc * 32;
  static_assert(kReduceFloats * 4 <= 48 * 1024, "the reduction buffer is static shared memory");
};

template <class Layout, class Cfg, class Elem, bool kVec>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks) gemv_kernel(const Params p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  // mma.m16n8k16 with bf16 and the L2 prefetch hint need sm_80; gemm_cuda.cu
  // picks this rung only there, so older targets just build.
  __trap();
#else
  using Shape = Tile<Layout, Cfg>;
  constexpr int kAcc = Shape::kAcc, kWarpsN = Cfg::kWarpsN, kWarpsK = Cfg::kWarpsK;
  __shared__ float reduce_buf[Shape::kReduceFloats > 0 ? Shape::kReduceFloats : 1];
  __shared__ bool last_of_tile;

  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int wn = warp % kWarpsN, wk = warp / kWarpsN;
  int64_t id = blockIdx.x;
  const int64_t token_block = id % p.token_blocks;
  id /= p.token_blocks;
  const int64_t n_tile = id % p.n_tiles;
  const int64_t split = id / p.n_tiles;
  const int64_t m_block = token_block * Cfg::kTokens;
  const int64_t n_block = n_tile * Shape::kBlockN;
  const int64_t n_warp = n_block + wn * Shape::kWarpN;
  const int64_t total_steps = (p.K + Layout::kStepK - 1) / Layout::kStepK;
  const int64_t step_begin = split * p.steps_per_split;
  const int64_t step_end = min(total_steps, step_begin + p.steps_per_split);

  float acc[kAcc];
#pragma unroll
  for (int i = 0; i < kAcc; ++i) acc[i] = 0.f;
  Layout::template accumulate<Cfg, Elem, kVec>(p, n_warp, m_block, step_begin + wk, step_end, lane,
                                               acc);

  // Tree over the kWarpsK warps of a column: round `half` parks warps
  // [half, 2 half) in shared memory and warps [0, half) add them. Lane-minor
  // layout: conflict-free.
#pragma unroll
  for (int half = kWarpsK / 2; half >= 1; half /= 2) {
    if (wk >= half && wk < 2 * half) {
      float* dst = reduce_buf + ((wk - half) * kWarpsN + wn) * kAcc * 32 + lane;
#pragma unroll
      for (int i = 0; i < kAcc; ++i) dst[i * 32] = acc[i];
    }
    __syncthreads();
    if (wk < half) {
      const float* src = reduce_buf + (wk * kWarpsN + wn) * kAcc * 32 + lane;
#pragma unroll
      for (int i = 0; i < kAcc; ++i) acc[i] += src[i * 32];
    }
    if (half > 1) __syncthreads();
  }

  // Warps wk == 0 now hold the block's sums. One split: they finish and store.
  if (p.splits == 1) {
    if (wk != 0) return;
#pragma unroll
    for (int r = 0; r < Cfg::kRowGroups; ++r) {
#pragma unroll
      for (int tt = 0; tt < Cfg::kTokenTiles; ++tt) {
#pragma unroll
        for (int c = 0; c < Layout::kAccPerTile; ++c) {
          const int64_t n = n_warp + Layout::acc_row(r, c, lane);
          const int64_t m = m_block + Layout::acc_token(tt, c, lane);
          if (n < p.N && m < p.M) {
            p.out[m * p.N + n] =
                finish<Elem>(p, n, acc[(r * Cfg::kTokenTiles + tt) * Layout::kAccPerTile + c]);
          }
        }
      }
    }
    return;
  }

  // Split-K across blocks: park this split's sums, count the tile's arrivals,
  // and let the last block add every split in split order (deterministic).
  if (wk == 0) {
    float* partial = p.partials + split * p.M * p.N;
#pragma unroll
    for (int r = 0; r < Cfg::kRowGroups; ++r) {
#pragma unroll
      for (int tt = 0; tt < Cfg::kTokenTiles; ++tt) {
#pragma unroll
        for (int c = 0; c < Layout::kAccPerTile; ++c) {
          const int64_t n = n_warp + Layout::acc_row(r, c, lane);
          const int64_t m = m_block + Layout::acc_token(tt, c, lane);
          if (n < p.N && m < p.M) {
            partial[m * p.N + n] = acc[(r * Cfg::kTokenTiles + tt) * Layout::kAccPerTile + c];
          }
        }
      }
    }
  }
  // Release: this block's partial sums are visible device-wide before its
  // arrival is counted (the classic threadfence reduction).
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned arrived = atomicAdd(p.tile_counters + n_tile * p.token_blocks + token_block, 1u);
    last_of_tile = arrived == static_cast<unsigned>(p.splits - 1);
  }
  __syncthreads();
  if (!last_of_tile) return;
  __threadfence();  // acquire: the other splits' sums, read through L2 (ld.cg)
  // At most kTokens x kBlockN (64 x 64) outputs: 32-bit tile indices.
  const int tokens = static_cast<int>(min(static_cast<int64_t>(Cfg::kTokens), p.M - m_block));
  const int cols = static_cast<int>(min(static_cast<int64_t>(Shape::kBlockN), p.N - n_block));
  for (int i = threadIdx.x; i < tokens * cols; i += Cfg::kThreads) {
    const int64_t m = m_block + i / cols, n = n_block + i % cols;  // n fastest: coalesced
    float sum = 0.f;
    for (int64_t s = 0; s < p.splits; ++s) sum += __ldcg(p.partials + (s * p.M + m) * p.N + n);
    p.out[m * p.N + n] = finish<Elem>(p, n, sum);
  }
#endif
}

}  // namespace gemv
}  // namespace memopt
