// kElems elements of type T moved as one aligned load or store: 16 bytes of
// bf16/fp16 (8) or fp32 (4) become one LDG.128 / STG.128. Used by the
// vectorized rungs of the norm and softmax ladders.
#pragma once

#include <c10/util/BFloat16.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace memopt {

template <typename T, int kElems>
struct alignas(sizeof(T) * kElems) Pack {
  T v[kElems];
};

// The 16-byte packs of T that hold kFloats elements (the cluster rungs keep
// 32 values a thread: 8 fp32 packs, 4 bf16/fp16 packs).
template <typename T, int kFloats = 32>
inline constexpr int kPacksHolding = kFloats / (16 / static_cast<int>(sizeof(T)));

// Packs a thread keeps in registers in the row-in-registers rungs (norm
// vectorized, softmax online) for a row of `row_packs` packs: 4, or 8 for
// fp32 rows that would need more than 512 threads at 4 (8192+ columns).
// Measured on the H200 (issue 5): 8 fp32 packs everywhere cost 3-11 points of
// copy at 768-8192 columns (half the threads a row, 64-register spills), while a
// 12288-wide fp32 row at 4 packs needed 1024 threads, one block an SM and
// nothing in flight while it reduced: 64% of copy, 86-90% at 8 packs and 512
// threads. 16-bit rows stay at 4 (32 values, as 8 fp32 packs).
constexpr int kRowVecs = 4;
constexpr int kWideRowVecs = 8;
inline int row_vecs(int64_t row_packs, int64_t element_size) {
  return element_size == 4 && row_packs > 512 * kRowVecs ? kWideRowVecs : kRowVecs;
}

// A whole Pack (2, 4, 8 or 16 bytes, `src` aligned to its size) in one load
// of that size. Copied as a struct of 16-bit elements into a selected
// temporary (`pk < end ? rows[pk] : P{}`) or read through a reference, a
// 16-byte pack of bf16 compiled to 8 predicated 2-byte loads (sm_90a).
template <typename P>
__device__ __forceinline__ P load_pack(const P* src) {
  using W = std::conditional_t<
      sizeof(P) == 16, uint4,
      std::conditional_t<sizeof(P) == 8, uint2,
                         std::conditional_t<sizeof(P) == 4, uint32_t, uint16_t>>>;
  static_assert(sizeof(P) == sizeof(W), "a pack of 2, 4, 8 or 16 bytes");
  P out;
  *reinterpret_cast<W*>(&out) = *reinterpret_cast<const W*>(src);
  return out;
}

// A 16-byte Pack stored to global memory `dst` (16-byte aligned) in one
// STG.128. Assigned as a struct of bf16 elements, or as a uint4 behind
// __builtin_assume_aligned, NVVM split it into four 4-byte stores (PTX of
// softmax's staged kernel, 2026-12-06), so the store is written in PTX.
template <typename P>
__device__ __forceinline__ void store_pack_global(P* dst, const P& value) {
  static_assert(sizeof(P) == 16, "16-byte packs");
  uint4 w;
  memcpy(&w, &value, sizeof(w));
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(__cvta_generic_to_global(dst)),
               "r"(w.x), "r"(w.y), "r"(w.z), "r"(w.w)
               : "memory");
}

// A Pack from an address aligned only to `align_bytes` (16, 8, 4 or 2; the
// same across a warp, so no lane diverges): words of that size, as many as
// the pack holds. The peeled norm rows read their weight and bias this way,
// at the row's head offset, while x and y stream in aligned 16-byte packs
// (the parameters are 1 / rows of the traffic, hits in L1 after the first row).
template <typename P>
__device__ __forceinline__ P load_pack_aligned_to(const void* src, int align_bytes) {
  P out;
  const auto copy = [&](auto word) {
    using W = decltype(word);
    static_assert(sizeof(P) % sizeof(W) == 0, "a pack is whole words");
    const W* s = static_cast<const W*>(src);
    W* d = reinterpret_cast<W*>(&out);
#pragma unroll
    for (int i = 0; i < static_cast<int>(sizeof(P) / sizeof(W)); ++i) d[i] = s[i];
  };
  if (align_bytes % 16 == 0) {
    copy(uint4{});
  } else if (align_bytes % 8 == 0) {
    copy(uint2{});
  } else if (align_bytes % 4 == 0) {
    copy(uint32_t{});
  } else {
    copy(uint16_t{});
  }
  return out;
}

// A Pack of T kept as the raw 32-bit words it was loaded as (a 2-byte pack in
// the low half of one), each element converted to fp32 only where it is used
// (element_of). Held as Pack<T, n>, a register pack of 16-bit elements is
// split into one register an element, and ptxas placed that split (a PRMT a
// word) right after the load: where the load sits behind a branch, or before
// other loads in program order, every later load then waited for it. The
// early norm instances' parameters so took 4-5 trips to memory in turn before
// the row was even requested (SASS, sm_90a, 2026-12-05: layer_norm 1 x 4096
// with its parameters in registers ran 7.10 us against 5.54 staged, H200).
template <typename T, int kElems>
struct alignas((sizeof(T) * kElems >= 16) ? 16 : (sizeof(T) * kElems >= 8 ? 8 : 4)) PackWords {
  static constexpr int kBytes = static_cast<int>(sizeof(T)) * kElems;
  static constexpr int kWords = (kBytes + 3) / 4;
  uint32_t w[kWords];
};

// The pack at `src` (aligned to its size) as raw words, in one load of its size
// (two 16-byte loads for a 32-byte pack). Its own size ladder, not
// load_pack_aligned_to at a constant alignment: that needed the ladder there as
// `if constexpr` steps (it compiles only for 16-byte multiples), and the rewrite
// changed the SASS of 244 norm kernels, 3 peeled ones from 0 to 8-16 stack
// bytes (sm_90a, 2026-12-06), unmeasured, so it was not kept.
template <typename T, int kElems>
__device__ __forceinline__ PackWords<T, kElems> load_pack_words(const Pack<T, kElems>* src) {
  PackWords<T, kElems> out;
  constexpr int kBytes = PackWords<T, kElems>::kBytes;
  if constexpr (kBytes % 16 == 0) {  // 16 bytes, or 32 (8 fp32 parameters of a 16-bit row)
#pragma unroll
    for (int i = 0; i < kBytes / 16; ++i) {
      const uint4 v = reinterpret_cast<const uint4*>(src)[i];
      out.w[4 * i] = v.x, out.w[4 * i + 1] = v.y, out.w[4 * i + 2] = v.z, out.w[4 * i + 3] = v.w;
    }
  } else if constexpr (kBytes == 8) {
    const uint2 v = *reinterpret_cast<const uint2*>(src);
    out.w[0] = v.x, out.w[1] = v.y;
  } else if constexpr (kBytes == 4) {
    out.w[0] = *reinterpret_cast<const uint32_t*>(src);
  } else {
    static_assert(kBytes == 2, "a pack of 2, 4, 8, 16 or 32 bytes");
    out.w[0] = *reinterpret_cast<const uint16_t*>(src);
  }
  return out;
}

// The same from an address aligned only to `align_bytes`: load_pack_aligned_to's
// word copies, into the words (the peeled norm rows' parameters at their head
// offset). At 4-byte alignment or more each word is loaded whole, so nothing is
// done to it until its use; at 2 bytes (odd widths only) the halves are joined
// into words as they arrive.
template <typename T, int kElems>
__device__ __forceinline__ PackWords<T, kElems> load_pack_words_aligned_to(const void* src,
                                                                         int align_bytes) {
  static_assert(PackWords<T, kElems>::kBytes % 4 == 0, "whole words: packs of 4 bytes or more");
  return load_pack_aligned_to<PackWords<T, kElems>>(src, align_bytes);
}

// Element j of a pack held as words, in fp32: the exact value (a bf16 is the
// high half of its fp32; a half is widened by cvt), the same bits as
// static_cast<float> of the element.
template <typename T, int kElems>
__device__ __forceinline__ float element_of(const PackWords<T, kElems>& p, int j) {
  if constexpr (sizeof(T) == 4) {
    return __uint_as_float(p.w[j]);
  } else {
    static_assert(sizeof(T) == 2, "fp32, bf16 or fp16 elements");
    const uint32_t word = p.w[j / 2];
    const uint32_t bits = j % 2 == 0 ? word & 0xffffu : word >> 16;
    if constexpr (std::is_same_v<T, c10::BFloat16>) {
      return __uint_as_float(bits << 16);
    } else {
      return __half2float(__ushort_as_half(static_cast<unsigned short>(bits)));
    }
  }
}

// Two fp32 values rounded to T (to nearest even, as static_cast<T> rounds on
// sm_80+) as one word of two 16-bit elements, `lo` in the low half: one F2FP.
template <typename T>
__device__ __forceinline__ uint32_t pack2_rn(float lo, float hi) {
  static_assert(sizeof(T) == 2, "bf16 or fp16 elements");
  if constexpr (std::is_same_v<T, c10::BFloat16>) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    uint32_t w;
    memcpy(&w, &v, sizeof(w));
    return w;
  } else {
    const __half2 v = __floats2half2_rn(lo, hi);
    uint32_t w;
    memcpy(&w, &v, sizeof(w));
    return w;
  }
}

// kElems fp32 values (element j from f(j)) rounded to a pack of 16-bit T held
// as words, two an F2FP.
template <typename T, int kElems, typename F>
__device__ __forceinline__ PackWords<T, kElems> pack_words_from(F f) {
  PackWords<T, kElems> out;
#pragma unroll
  for (int i = 0; i < kElems / 2; ++i) out.w[i] = pack2_rn<T>(f(2 * i), f(2 * i + 1));
  return out;
}
// A pack held as words stored at dst (aligned to its size) in one store of its
// size, as the words it is: no split into 16-bit registers and back.
template <typename T, int kElems>
__device__ __forceinline__ void store_pack_words(Pack<T, kElems>* dst,
                                                 const PackWords<T, kElems>& p) {
  constexpr int kBytes = PackWords<T, kElems>::kBytes;
  static_assert(kBytes == 16 || kBytes == 8 || kBytes == 4, "a pack of 4, 8 or 16 bytes");
  if constexpr (kBytes == 16) {
    *reinterpret_cast<uint4*>(dst) = make_uint4(p.w[0], p.w[1], p.w[2], p.w[3]);
  } else if constexpr (kBytes == 8) {
    *reinterpret_cast<uint2*>(dst) = make_uint2(p.w[0], p.w[1]);
  } else {
    *reinterpret_cast<uint32_t*>(dst) = p.w[0];
  }
}

}  // namespace memopt
