// kElems elements of type T moved as one aligned load or store: 16 bytes of
// bf16/fp16 (8) or fp32 (4) become one LDG.128 / STG.128. Used by the
// vectorized rungs of the norm and softmax ladders.
#pragma once

#include <cstdint>
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

}  // namespace memopt
