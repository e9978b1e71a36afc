// One thread's share of a softmax row (or of a cluster's slice of one) for the
// online and cluster rungs: the pairs it reduces to and the output it writes.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "common/fast_exp.cuh"
#include "common/nan_max.h"
#include "common/pack.cuh"

namespace memopt {

// Merges (m2, s2) into (m, s): s * e^(m - max) + s2 * e^(m2 - max), the online
// softmax normalizer; two empty (-inf, 0) pairs stay (-inf, 0). The exponents
// are <= 0, in the exact form (x - m)·log2(e) through ex2.approx: 3 instructions
// each against expf's ~10, and it runs once a pack in OnlineSlice's tail.
__device__ __forceinline__ void merge_online(float& m, float& s, float m2, float s2) {
  const float mx = nan_propagating_max(m, m2);
  if (mx == -INFINITY) return;
  s = s * ExpShiftExact{mx}(m) + s2 * ExpShiftExact{mx}(m2);
  m = mx;
}

// merge_online over each group of kLanes lanes (a power of two up to 32), by a
// butterfly: every lane of a group ends with its group's pair, to within the
// last bit of the sum (the merge's FFMA does not commute).
template <int kLanes>
__device__ __forceinline__ void merge_online_over_lanes(float& m, float& s) {
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset >>= 1) {
    merge_online(m, s, __shfl_xor_sync(0xffffffffu, m, offset),
                 __shfl_xor_sync(0xffffffffu, s, offset));
  }
}

// merge_online over a block of kWarps warps (up to 32): each warp's lanes by
// the butterfly, then the warps' pairs, staged in warp_m / warp_s (kWarps
// floats of shared memory each), by warp 0's butterfly: 5 merges deep at 32
// warps, where one thread's loop was 31, each a max and two e^x in turn.
// After it warp 0's lanes hold the block's pair (the other threads their
// warp's). One barrier: a caller passes another before it writes warp_m /
// warp_s again (its next row).
template <int kWarps>
__device__ __forceinline__ void merge_online_over_block(float& m, float& s, float* warp_m,
                                                        float* warp_s) {
  static_assert(kWarps >= 1 && kWarps <= 32, "warp 0 merges one pair a lane");
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  merge_online_over_lanes<32>(m, s);
  if (lane == 0) warp_m[warp] = m, warp_s[warp] = s;
  __syncthreads();
  if (warp == 0) {
    m = lane < kWarps ? warp_m[lane] : -INFINITY;
    s = lane < kWarps ? warp_s[lane] : 0.f;
    merge_online_over_lanes<32>(m, s);
  }
}

// The pack held in `words`, as a copy the compiler cannot tie to the words'
// earlier uses: an empty asm claims to rewrite each word (no instruction is
// emitted). For the packs kept as loaded, as 4 32-bit words: held as bf16
// packs, ptxas split them into 16-bit values, kept the floats converted for
// the max alive across the block reduction, and spilled 72-126 bytes.
template <typename P>
__device__ __forceinline__ P pack_from_words(uint4 words) {
  static_assert(sizeof(P) == sizeof(uint4), "16-byte packs");  // kRaw only
  asm("" : "+r"(words.x), "+r"(words.y), "+r"(words.z), "+r"(words.w));
  P v;
  memcpy(&v, &words, sizeof(P));
  return v;
}

// The packs first + t + k * kStride of [first, last): the first kVecs of them
// in registers, the packs past the registers folded into the running pair and
// recomputed when written. Exponentials are exp_shifted (common/fast_exp.cuh:
// FFMA + MUFU.EX2): with expf, bf16 rows were bound by instruction issue at
// 58-67% of copy. The registers hold either
// - (kRaw false) e^(x - m_local) as floats after `reduce`, so `write` only
//   rescales them: one exponential an element, 8 registers a 16-bit pack; or
// - (kRaw true) the packs as loaded, 4 registers a 16-bit pack, and `write`
//   recomputes their exponentials (one FFMA + MUFU.EX2 an element more): twice
//   the row in the same registers, for 16-bit rows past 16384 columns, which
//   at 4 float packs a thread took one 1024-thread block an SM (bf16 4096 x
//   32768 at 58% of copy: nothing else in flight while a block reduces).
//
// kPackBytes < 16: packs of one element (sizeof(in_t)), for rows whose width
// or pointers break the 16-byte pack (softmax_narrow.cu); held as floats.
//
// kWholeLoads: 16-bit packs read in one load of their size (pack_at). Read as
// `xr[pk]` into a selected temporary or through a reference, each 16-byte
// bf16 pack compiled to 8 two-byte loads (sm_90a SASS: 2816 over the online
// kernels, 640 over the cluster ones). Whole, softmax_cuda.cu's online
// kernels have none and their spills went 108 -> 4 bytes in all (kVecs 8:
// 16-20 -> 0), but the 512-thread cluster kernels' went 0 -> 8-44 and the
// peeled online kernels' 504 -> 944 over softmax_peeled.cu, so those keep the
// plain read (false) until the H200 says which is faster there; through
// pack_at's reference their ptxas output is as before (written as
// `if constexpr` copies at each use, the online kernels spilled 114-126).
template <typename in_t, typename out_t, int kVecs, int kStride, bool kRaw = false,
          int kPackBytes = 16, bool kWholeLoads = true>
struct OnlineSlice {
  static_assert(kPackBytes == 16 || kPackBytes == static_cast<int>(sizeof(in_t)),
                "16-byte packs or single elements");
  static_assert(!kRaw || kPackBytes == 16, "packs kept as loaded are 16-byte words");
  static constexpr int kVec = kPackBytes / sizeof(in_t);
  using InPack = Pack<in_t, kVec>;
  using OutPack = Pack<out_t, kVec>;
  using Cache = std::conditional_t<kRaw, uint4[kVecs], float[kVecs][kVec]>;

  Cache cache;
  float m_local = -INFINITY;

  // Pack pk of the row: for 16-bit rows where kWholeLoads, a copy read in one
  // load of its size (common/pack.cuh's load_pack); else the row's own pack
  // (a reference, so each use reads as `xr[pk]` did).
  __device__ __forceinline__ static decltype(auto) pack_at(const InPack* xr, int64_t pk) {
    if constexpr (kWholeLoads && sizeof(in_t) < 4) {
      return load_pack(xr + pk);
    } else {
      return (xr[pk]);
    }
  }

  // This thread's (max, sum of e^(x - max)) over its packs.
  __device__ __forceinline__ void reduce(const InPack* xr, int64_t first, int64_t last, int t,
                                         float& m, float& s) {
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const int64_t pk = first + t + static_cast<int64_t>(k) * kStride;
      const InPack v = pk < last ? pack_at(xr, pk) : InPack{};
      if constexpr (kRaw) memcpy(&cache[k], &v, sizeof(v));
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        const float x = pk < last ? static_cast<float>(v.v[j]) : -INFINITY;
        if constexpr (!kRaw) cache[k][j] = x;
        m_local = nan_propagating_max(m_local, x);
      }
    }
    m = m_local;
    s = 0.f;
    if constexpr (kRaw) {
      if (m_local != -INFINITY) {
        with_exp_shift(m_local, [&](auto exp) {
#pragma unroll
          for (int k = 0; k < kVecs; ++k) {
            if (first + t + static_cast<int64_t>(k) * kStride >= last) continue;
            const InPack v = pack_from_words<InPack>(cache[k]);
#pragma unroll
            for (int j = 0; j < kVec; ++j) s += exp(static_cast<float>(v.v[j]));
          }
        });
      }
    } else {
      const auto exp_cached = [&](auto exp) {
#pragma unroll
        for (int k = 0; k < kVecs; ++k) {
#pragma unroll
          for (int j = 0; j < kVec; ++j) {
            cache[k][j] = exp(cache[k][j]);
            s += cache[k][j];
          }
        }
      };
      // A slice of only -inf (or padding) keeps zeros: a shift of +inf makes
      // every exponential 2^-inf = 0 without a select an element.
      if (m_local == -INFINITY) {
        exp_cached(ExpShiftFma{INFINITY});
      } else {
        with_exp_shift(m_local, exp_cached);
      }
    }
    for (int64_t pk = first + static_cast<int64_t>(kVecs) * kStride + t; pk < last; pk += kStride) {
      const InPack v = pack_at(xr, pk);
      float pm = -INFINITY, ps = 0.f;
#pragma unroll
      for (int j = 0; j < kVec; ++j) pm = nan_propagating_max(pm, static_cast<float>(v.v[j]));
      // Always the exact form here (one FADD more an element than the FFMA form):
      // choosing between the two a pack, as with_exp_shift does a row, cost 10% at
      // 1024 x 131072 bf16 (2510 -> 2278 GB/s) and 8-24 bytes of spills.
      if (pm != -INFINITY) {
        const ExpShiftExact exp{pm};
#pragma unroll
        for (int j = 0; j < kVec; ++j) ps += exp(static_cast<float>(v.v[j]));
      }
      merge_online(m, s, pm, ps);
    }
  }

  // y = e^(x - row_m) / row_s over this thread's packs. A row of -inf only
  // gives NaN, as torch.softmax does (e^(-inf - -inf)); elsewhere a thread
  // whose elements are all -inf writes zeros for them.
  __device__ __forceinline__ void write(const InPack* xr, OutPack* yr, int64_t first,
                                        int64_t last, int t, float row_m, float row_s) const {
    const float inv_sum = 1.f / row_s;
    const auto scaled = [inv_sum](const InPack& v, auto exp) {
      OutPack out;
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        out.v[j] = static_cast<out_t>(exp(static_cast<float>(v.v[j])) * inv_sum);
      }
      return out;
    };
    if constexpr (!kRaw) {
      const float scale = row_m == -INFINITY     ? NAN
                          : m_local == -INFINITY ? 0.f
                                                 : expf(m_local - row_m) * inv_sum;
#pragma unroll
      for (int k = 0; k < kVecs; ++k) {
        const int64_t pk = first + t + static_cast<int64_t>(k) * kStride;
        if (pk >= last) continue;
        OutPack out;
#pragma unroll
        for (int j = 0; j < kVec; ++j) out.v[j] = static_cast<out_t>(cache[k][j] * scale);
        yr[pk] = out;
      }
    }
    with_exp_shift(row_m, [&](auto exp) {
      if constexpr (kRaw) {
#pragma unroll
        for (int k = 0; k < kVecs; ++k) {
          const int64_t pk = first + t + static_cast<int64_t>(k) * kStride;
          if (pk < last) yr[pk] = scaled(pack_from_words<InPack>(cache[k]), exp);
        }
      }
      for (int64_t pk = first + static_cast<int64_t>(kVecs) * kStride + t; pk < last;
           pk += kStride) {
        yr[pk] = scaled(pack_at(xr, pk), exp);
      }
    });
  }
};

}  // namespace memopt
