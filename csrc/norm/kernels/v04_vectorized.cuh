// Rung 4 of the LayerNorm / RMSNorm ladder: vectorized.
//
// What changed from block_smem: every load and store moves 16 bytes (8
// bf16/fp16 or 4 fp32 elements: LDG.128), so a warp has 512 bytes in flight
// per load instruction instead of 64-128; the row lives in registers
// (kVecs packs a thread: common/pack.cuh's row_vecs; fp32 statistics from
// them), no shared-memory copy; and the threads of a row are sized to the row
// (kThreads of 32 ... 1024 so that each holds at most kVecs packs), with
// several rows a block when a row needs fewer than 128 threads, so narrow
// rows (768-1000) fill blocks too.
// Rows wider than kThreads x kVecs packs re-read the rest from global memory.
//
// Requires row_length % (16 / sizeof(scalar_t)) == 0 and 16-byte aligned x,
// y, weight and bias; the launcher takes block_smem otherwise.
//
// kPackBytes < 16: the same kernel with 8-, 4- or 2-byte packs, for rows whose
// width (or stride, or a pointer) breaks the 16-byte pack but not a narrower
// one: N = 2050 in bf16 reads 4-byte packs, N = 4100 8-byte ones, an odd N
// single elements (norm_narrow_packs.cu picks the widest that fits). A thread
// keeps the same 16 or 32 values (16 / kPackBytes times the packs), so the
// bytes in flight a thread are those of the 16-byte kernel; only the load
// instructions multiply, and a warp's narrow load still covers 64-256
// contiguous bytes (every sector whole). block_smem, which these widths took
// before, reads 2 bytes a thread an instruction with a shared-memory round
// trip (16384 x 2050 rms_norm at 0.70x the best peer, issue 17).
//
// kPeel: 16-byte packs for any width. A row of N = 4100 bf16 starts 8 bytes
// off a 16-byte boundary every other row, so 8-byte packs were the widest
// that fit every row (16384 x 4100 rms_norm at 2.93 TB/s against 3.82 at
// 4096, issue 17). Peeled, each row's first `head` elements (up to the first
// 16-byte boundary of x) and its last `tail` ones (past the last whole pack)
// are single elements, one a thread in the row's first threads, and the rest
// streams in aligned 16-byte packs. The output, residual and sum rows must
// sit as far off 16 bytes as x's (the launcher checks); weight and bias are
// read at the head offset with the widest words their alignment allows.
//
// kAdd (the fused add_layer_norm / add_rms_norm): the row is input +
// residual, rounded to scalar_t as `input + residual` would be; the kernel
// writes that sum (its second output) while loading, and normalizes it. One
// pass: 2 reads and 2 writes an element instead of the 3 reads and 2 writes
// of an add kernel followed by the norm. Past the registers it re-reads the
// sum it wrote (each thread its own packs).
//
// kCluster > 1 is rung 5, cluster (Hopper): a row too wide for one block's
// registers (past 32768 elements) is split across the
// kCluster CTAs of a thread-block cluster, each holding its slice in
// registers; each CTA's partial sum (then sum of squares) is published in its
// shared memory and every CTA adds up all of them through distributed shared
// memory after a cluster barrier, in rank order (deterministic). One row a
// cluster, grid (kCluster, rows). Not timed: the benchmark's norm rows stop at
// 12288 columns, where "cluster" runs this kernel without one; tested at 65536
// and 262144 columns.
//
// Expected: near copy speed wherever the grid holds enough rows.
//
// Measured (the norms suite, H200, benchmarks/results/norms_h200.json):
// 16384x4096 layer_norm 93.8% of copy fp32, 87.8% bf16; 4096x12288 fp32 86.4%
// (64% before 8 fp32 packs a thread); the fused add + norm 2.7-4.1 TB/s.
#pragma once

#include <cooperative_groups.h>

#include <type_traits>

#include "common/cp_async.cuh"
#include "common/pack.cuh"
#include "common/prefetch.cuh"
#include "common/register_cap.cuh"
#include "norm/kernels/normalize.cuh"

namespace memopt {

constexpr int kNormThreadElems = 32;      // the most row elements a thread keeps in registers
constexpr int kNormVecMinBlock = 128;     // threads a block at least (several narrow rows)
// The most parameter bytes (weight and bias) a block stages in shared memory:
// no opt-in past the default 48 KB a block (norm_vectorized_launch.cuh).
constexpr int kNormMaxParamStageBytes = 32 * 1024;
// Whether an early-parameter instance (kEarly) loads the parameters' packs of
// its cached row packs into registers right after the row's own loads, both
// in flight at once, as Triton's norms (Liger, torch.compile) load weight and
// row together: no shared memory, no cp.async wait or barrier before the
// stores, and no copy to repeat in each block (staging's cost past one wave).
// The early instances are uncapped (1 block an SM at least), so the registers
// this takes fit up to 256 threads a row (255 a thread); at 512 and 1024 the
// cap is 128 and 64: 512 takes the narrower parameters (below), the rest
// stage. Measured before it (H200, bf16 rms_norm 1 x 4096, kernel timer):
// staged 5.41 us, no weight 4.90, Liger 4.16
// (benchmarks/results/tune/norm_latency_probe_packs_w4096_h200.json).
// LayerNorm's weight and bias too (2026-12-05, not yet run on a GPU). Its
// first register path ran slower than staging at every grid under 512 rows,
// most at one row (H200, bf16, us, staged at a8f8bca -> registers at fad1b2d):
// 1 x 768 5.28 -> 6.24, 1 x 4096 5.54 -> 7.10, 1 x 8192 5.89 -> 7.33, 8 x
// 4096 5.50 -> 6.11, 64 x 4096 6.02 -> 6.24
// (norm-grid_bf16_layer_norm_{early,registers}_h200.json). Its SASS says why:
// each parameter pack was split into 16-bit registers right after its load,
// behind the `pk < end` branch, so the 8 loads and then the row's went out
// one trip to memory after another. Held as raw words (PackWords, at
// weight_regs in the kernel), all 12 loads of the 1 x 4096 kernel issue
// before the first use of any (126 registers, no stack), and the staged
// instances' ~500 instructions of cp.async and prefetch code before the
// row's first load (instruction 516 of the staged 1 x 4096 kernel) are gone.
// At 512 threads (128 registers a thread) too, where a parameter's packs take
// 16 registers a thread at most, in unpeeled rows: the rows of 16-bit or fp32
// parameters of their own width (fp32 4097-8192 columns, 16-bit 8193-16384)
// in packs of 4-16 bytes. ptxas (sm_90a): fp32 layer_norm 96 registers,
// add_layer_norm 128, no stack; with twice that (16-bit rows with fp32
// parameters, fp32 rows of 8 packs a thread, 16-bit rows in 2-byte packs, a
// register each) it spilled 6-96 bytes, and fp32 add_layer_norm's peeled
// rows 8. Those stage or prefetch as before. At 8192 fp32 columns
// layer_norm's 64 KB of parameters are more than a block stages: they were
// prefetched to L2 and read after the reductions.
constexpr int kNormMaxRegisterParamThreads = 256;
constexpr int kNormWideRegisterParamThreads = 512, kNormWideRegisterParamWords = 16;
template <typename param_t, int kThreads, int kNormVecs, int kVec, int kCluster, bool kPeel,
          bool kEarly>
inline constexpr bool kNormParamsInRegisters =
    kEarly && kCluster == 1 &&
    (kThreads <= kNormMaxRegisterParamThreads ||
     (kThreads <= kNormWideRegisterParamThreads && !kPeel &&
      kNormVecs * PackWords<param_t, kVec>::kWords <= kNormWideRegisterParamWords));
// Whether an early-parameter instance (kEarly) can stage its parameters in
// shared memory (the kernel's comment at its copies says why the peeled and
// the wide ones do not); the launcher asks the same, so it stages nothing for
// an instance without it and prefetches towards L2 instead.
// Since the early instances that can load the parameters into registers do
// so instead (kNormParamsInRegisters), only the others stage.
template <typename param_t, int kThreads, int kNormVecs, int kVec, int kCluster, bool kPeel>
inline constexpr bool kNormStagesParams =
    kCluster == 1 && !kPeel &&
    !kNormParamsInRegisters<param_t, kThreads, kNormVecs, kVec, kCluster, kPeel, true> &&
    (kThreads / 2) * kNormVecs * kVec * static_cast<int>(sizeof(param_t)) <=
        kNormMaxParamStageBytes;
// Blocks an SM must hold: 64 registers a thread at most. Left to itself
// ptxas gave the fp32 kernels 77-86 registers (24 warps an SM); at 64 they
// keep 24-28 bytes of prologue values on the stack, outside the loops. The
// early-parameter instances (kEarly), whose grids hold one wave at most
// (rms_norm's of up to 128 threads, past one wave, measured faster uncapped
// than the capped late instance: param_stage in norm_vectorized_launch.cuh),
// are left uncapped, and so is most of the fused add (kAdd): at 64 registers its
// bf16 add_layer_norm spilled 32-56 bytes, its peeled and narrow-pack bf16 rows
// 16-96. Its 16-byte-pack add_rms_norm rows of 64-256 threads are capped: no
// stack, bf16 80 -> 64 registers, fp32 166-174 -> 64 (ptxas, sm_90a). Uncapped,
// a bf16 row of 256 threads ran 3 blocks an SM, so 512 rows of 6144 took 1.29
// waves. Capped, on an H100 (2026-12-06, A/B in one process each, Liger in the
// same runs): bf16 512 x 6144 / 8192 -11 / -10%, fp32 512 x 3072 / 4096 -14%,
// 4096 x 768 -9%, 16384 x 3072 -9%. At 32 threads (bf16 768-1024) the cap cost
// 8 bytes of stack and 16384 rows +3-5%; at 512 (fp32 6144-8192), +1-2%: those
// stay uncapped. With the rows held as words (XWords) the 16-bit 32-thread
// add_rms_norm kernels with 16-bit weights fit 64 without stack (ptxas,
// sm_90a: 80 -> 64 registers), so they are capped: with the words, bf16
// 4096 x 768 / 1024 -11.8 / -11.5% (H100 A/B, 2026-12-07). fp32
// add_layer_norm's rows of 64-256 threads likewise: 100-103 -> 64 registers,
// no stack, 2 -> 4 blocks an SM at 256 threads; measured
// (H100, 2026-12-06, bf16 the unchanged control) 512 x 3072 / 4096 / 4100 -11%,
// 4096 x 768 / 1024 -5 / -7%, the rest of the grid within 1%. Its bf16 rows
// stay uncapped (they spill 32-56 bytes at 64); fp16 (70 -> 56) is not timed.
// 16-bit layer_norm's peeled rows (N = 2050 in bf16) are uncapped too: at 64
// they kept 4 bytes on the stack (16 of reloads), uncapped 72-81 registers
// and none. Measured (H100, 2026-12-07, A/B in one call, Liger the drift
// control): bf16 16384 / 4096 / 512 x 2050 -5.5 / -3.3 / -1%, 1-64 rows
// within the runs' drift; 16384 x 2050 reads 85% of 2048's GB/s (80% capped).
template <int kThreads>
inline constexpr int kNormVecMinBlocksPerSm =
    kMinBlocksAt64Registers<(kThreads < kNormVecMinBlock ? kNormVecMinBlock : kThreads)>;
template <typename scalar_t, typename param_t, int kThreads, bool kRms, bool kAdd, int kPackBytes,
          bool kPeel, bool kEarly>
inline constexpr bool kNormUncapped =
    kEarly || (kAdd && !(kPackBytes == 16 && !kPeel && kThreads <= 256 &&
                         (kThreads >= 64 || (kRms && sizeof(scalar_t) == 2 &&
                                             sizeof(param_t) == 2)) &&
                         (kRms || std::is_same_v<scalar_t, float>))) ||
    (!kRms && sizeof(scalar_t) == 2 && kPeel);

// Whether the kernel keeps its row's packs in registers as loaded (16-bit
// values two a register, converted to fp32 at each of their 2-3 uses) rather
// than converted once to fp32. As loaded where fp32 does not fit: under the
// 64-register cap, 16-bit layer_norm at 256 threads a row spilled 36 bytes
// with the fp32 row and none with the packs (16384 x 8192 bf16: 153.7 ->
// 141.6 us), and the fused add (uncapped) took 107 -> 88 registers (add_rms_norm
// grid 2.6% faster). At 32-128 threads the fp32 row fits without spills, and
// the packs build lost layer_norm 6-13% there (16384 x 3072 bf16 56.7 -> 63.9
// us, 16384 x 768 18.9 -> 20.1; rms_norm under 2% either way; H200,
// benchmarks/results/tune/norm-grid_bf16_*_{early,packs}_h200.json), though
// that build also read its packs in 2-byte loads (pack_at in the kernel says
// why): which row is faster with whole-pack loads on both is not measured.
// The kEarly instances are held only by the register file (65536 / kThreads:
// 64 at 1024 threads, where the fp32 row spilled 4-8 bytes). The peeled and
// the narrow-pack rows keep packs at every size: with the fp32 row their
// 16-bit layer_norm kernels spilled 4-36 bytes at 32-128 threads (ptxas,
// sm_90a). So do 16-bit rows with fp32 parameters (kWideParams: their
// parameter packs take twice the registers), which spilled 2-12 bytes at
// 32-128 threads with the fp32 row. (32-bit rows: the packs are fp32 already.)
template <int kThreads, bool kAdd, bool kPeel, int kPackBytes, bool kEarly, bool kWideParams>
inline constexpr bool kNormKeepsPacks =
    kAdd || kPeel || kWideParams || kPackBytes < 16 || kThreads >= (kEarly ? 1024 : 256);

// The row total from each CTA's total (the same in all its threads): one
// thread publishes it in `slot` of its shared memory, and after a cluster
// barrier every thread adds all kCluster slots through distributed shared
// memory, in rank order.
template <int kCluster>
__device__ __forceinline__ float cluster_total(float cta_total, float* slot) {
  const auto cluster = cooperative_groups::this_cluster();
  if (threadIdx.x == 0) *slot = cta_total;
  cluster.sync();
  float total = 0.f;
#pragma unroll
  for (int r = 0; r < kCluster; ++r) total += *cluster.map_shared_rank(slot, r);
  return total;
}

// kEarly: the instance for small grids (one wave of it where it holds the
// parameters in registers, any grid for rms_norm's weight at up to 128
// threads a row, half a wave where it stages or prefetches them; see at
// weight_regs and at the copies, and param_stage in
// norm_vectorized_launch.cuh), which fetches the parameters early
// and is not held to the 64-register cap (its grid is not occupancy-bound).
// The instances for
// larger grids are compiled without any of it: the staging code compiled into
// every kernel cost the 16-bit layer_norm kernels 24-32 bytes of spills under
// the cap, and 9-14% at 4096-16384 rows of 4096 (H200, layer_norm 16384 x 4096
// 69.7 -> 75.7 us; benchmarks/results/tune/norm-grid_bf16_layer_norm_prefetch_h200.json).
template <typename scalar_t, typename param_t, bool kRms, int kThreads, bool kAdd = false,
          int kCluster = 1, int kNormVecs = kRowVecs, int kPackBytes = 16, bool kPeel = false,
          bool kEarly = false>
__global__ void __launch_bounds__(kThreads < kNormVecMinBlock ? kNormVecMinBlock : kThreads,
                                  kNormUncapped<scalar_t, param_t, kThreads, kRms, kAdd,
                                                kPackBytes, kPeel, kEarly>
                                      ? 1
                                      : kNormVecMinBlocksPerSm<kThreads>)
    norm_vectorized_kernel(const scalar_t* __restrict__ x, const param_t* __restrict__ weight,
                           const param_t* __restrict__ bias, scalar_t* __restrict__ y,
                           int64_t rows, int64_t row_length, int64_t in_stride, float eps,
                           const scalar_t* __restrict__ residual = nullptr,
                           scalar_t* __restrict__ sum_out = nullptr, int stage_elems = 0,
                           int prefetch_elems = 0) {
  static_assert(kPackBytes >= static_cast<int>(sizeof(scalar_t)) && 16 % kPackBytes == 0,
                "a pack is 1-8 whole elements of at most 16 bytes");
  constexpr int kVec = kPackBytes / static_cast<int>(sizeof(scalar_t));
  constexpr int kBlock = kThreads < kNormVecMinBlock ? kNormVecMinBlock : kThreads;
  constexpr int kRowsPerBlock = kBlock / kThreads;
  using XPack = Pack<scalar_t, kVec>;
  using PPack = Pack<param_t, kVec>;
  // 16-bit rows held as the 32-bit words they load as (XWords), each element
  // taken out by a shift or a mask where it is used (element_of) and two
  // results rounded into a word by one F2FP (pack_words_from): held as packs
  // of 16-bit elements, every load was split into one register an element
  // (a PRMT each) and every store put back together (another), 20-25
  // instructions a pack. Measured (H100 A/B, 2026-12-07, bf16): add_rms_norm
  // -4 to -5% at 1-64 rows, -3% at 4096 (-12% at 768-1024 columns), the other
  // norms within 1%.
  // Only where the kernel is not held to 64 registers (uncapped, under 1024
  // threads), and in the 32-thread 16-bit add_rms_norm rows capped with it:
  // in the other capped kernels the words cost 8-16 bytes of stack (ptxas,
  // sm_90a, norm_cuda.cu 32 -> 88; norm_packs_4.cu's 1024-thread bf16
  // layer_norm 0 -> 8).
  constexpr bool kWords =
      sizeof(scalar_t) == 2 && sizeof(param_t) == 2 && kVec % 2 == 0 &&
      ((kThreads < 1024 &&
        kNormUncapped<scalar_t, param_t, kThreads, kRms, kAdd, kPackBytes, kPeel, kEarly>) ||
       (kAdd && kRms && kThreads == 32));
  using XWords = PackWords<scalar_t, kVec>;
  using RowPack = std::conditional_t<kWords, XWords, XPack>;
  static_assert(kCluster == 1 || kRowsPerBlock == 1, "a cluster splits one row a CTA group");
  static_assert(!kPeel || (kCluster == 1 && kPackBytes == 16), "peeled rows: one CTA, 16-byte packs");
  __shared__ float scratch[kBlock / 32];
  __shared__ float cta_part[2];  // kCluster > 1: this CTA's sum and sum of squares

  const int t = threadIdx.x % kThreads;
  const int64_t row = kCluster > 1 ? static_cast<int64_t>(blockIdx.y)
                                   : static_cast<int64_t>(blockIdx.x) * kRowsPerBlock +
                                         threadIdx.x / kThreads;
  // Rows past the end still take part in the block's barriers.
  const bool active = row < rows;
  // kPeel: the elements before x's first 16-byte boundary in this row (at most
  // the row), then whole packs, then the tail; 0, all packs, 0 otherwise.
  int head = 0;
  if constexpr (kPeel) {
    const auto addr = reinterpret_cast<uintptr_t>(x + row * in_stride);
    const int64_t to_boundary = static_cast<int64_t>((16 - addr % 16) % 16 / sizeof(scalar_t));
    head = active ? static_cast<int>(to_boundary < row_length ? to_boundary : row_length) : 0;
  }
  // Pack indices within a row are 32-bit (the launcher sends rows of 2^30
  // packs or more to block_smem); only the row offsets below need 64 bits. With
  // 64-bit pack indices the fp32 kernels took 78-86 registers a thread.
  const int row_packs = active ? static_cast<int>((row_length - head) / kVec) : 0;
  const int tail = active ? static_cast<int>(row_length - head) - row_packs * kVec : 0;
  // This CTA's packs of the row, [first, end): all of them, or its rank's slice.
  int rank = 0;
  if constexpr (kCluster > 1) rank = static_cast<int>(cooperative_groups::this_cluster().block_rank());
  const int per_cta = kCluster > 1 ? (row_packs + kCluster - 1) / kCluster : row_packs;
  const int first = kCluster > 1 ? rank * per_cta : 0;
  const int end = kCluster > 1 ? min(row_packs, first + per_cta) : row_packs;
  // Input rows in_stride apart (a multiple of the pack), everything else contiguous.
  const XPack* xr = reinterpret_cast<const XPack*>(x + row * in_stride + head);
  XPack* yr = reinterpret_cast<XPack*>(y + row * row_length + head);
  const XPack* rr =
      kAdd ? reinterpret_cast<const XPack*>(residual + row * row_length + head) : nullptr;
  XPack* sr = kAdd ? reinterpret_cast<XPack*>(sum_out + row * row_length + head) : nullptr;
  // kAdd: a + b rounded to scalar_t (as `input + residual`), stored as pack
  // pk of sum_out.
  const auto add_pack = [&](int pk, const RowPack& a, const RowPack& b) {
    if constexpr (kWords) {
      const XWords s = pack_words_from<scalar_t, kVec>(
          [&](int j) { return element_of(a, j) + element_of(b, j); });
      store_pack_words(sr + pk, s);
      return s;
    } else {
      XPack s;
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        s.v[j] = static_cast<scalar_t>(static_cast<float>(a.v[j]) + static_cast<float>(b.v[j]));
      }
      sr[pk] = s;
      return s;
    }
  };
  const auto to_float = [](const RowPack& a, float (&v)[kVec]) {
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      if constexpr (kWords) {
        v[j] = element_of(a, j);
      } else {
        v[j] = static_cast<float>(a.v[j]);
      }
    }
  };
  // Pack pk of `rows` in one load of kPackBytes (common/pack.cuh's
  // load_pack). Read as `rows[pk]`, the 16-bit packs compiled to 8
  // predicated 2-byte loads each: 96 of layer_norm's 128-thread kernel's
  // loads where a8f8bca had none, the likely cause of the 6-13% it lost at
  // 4096-16384 rows (H200, norm-grid_bf16_layer_norm_packs_h200.json; SASS,
  // sm_90a). 32-bit rows keep `rows[pk]` outside the fused add (kWholeLoads
  // false): they compiled to whole-pack loads already, and through load_pack
  // their 4-byte-pack kernels spilled 80-104 more bytes at the 64-register cap.
  constexpr bool kWholeLoads = sizeof(scalar_t) < 4;
  const auto pack_at = [](const XPack* rows, int pk) {
    if constexpr (kWords) {
      return load_pack_words(rows + pk);
    } else {
      return load_pack(rows + pk);
    }
  };
  // Pack pk of the row to normalize, in fp32: x, or x + residual rounded to
  // scalar_t and written to sum_out on the first pass.
  const auto load = [&](int pk, float (&v)[kVec], bool first_pass) {
    if constexpr (kAdd) {
      return to_float(first_pass ? add_pack(pk, pack_at(xr, pk), pack_at(rr, pk)) : pack_at(sr, pk),
                      v);
    }
    if constexpr (kWholeLoads) {
      to_float(pack_at(xr, pk), v);
    } else {
      to_float(xr[pk], v);
    }
  };
  const float n = static_cast<float>(row_length);

  // The parameters' first stage_elems elements (the part of a row the
  // registers keep; 0: none, the launcher's choice) copied into shared memory
  // by cp.async before the row's loads are issued, so that they arrive during
  // the reductions. Read after them from global memory, the weight was a
  // second trip to HBM on a short row's critical path: 1.1-1.7 us of
  // rms_norm's 6.7 at 1-512 rows of 4096 bf16, where Triton's kernels run
  // 4.2-5.3 (benchmarks/tune/norm_latency_probe.py, H200); staged, 5.4 at one
  // row. The block's rows share one copy; no registers are held for it
  // meanwhile. Only the kEarly instances past 256 threads a row (the
  // narrower ones hold the parameters in registers: weight_regs below), which
  // the launcher takes for grids of half a wave at most (param_stage in
  // norm_vectorized_launch.cuh says why); _C._set_norm_param_stage(0) turns
  // them off (norm_common.h).
  // Staged from element 0 (weight and bias 16-byte aligned, whole 16-byte
  // chunks: common/cp_async.cuh), bias from the next 16-byte boundary, at any
  // pack width. Not the peeled rows: their part ends mid-chunk (a width off
  // the pack, or a head past the registers' part), which cp.async cannot copy
  // within bounds; staged with a part-chunk they measured 6.40 us at 1 x 2050
  // bf16 rms_norm against 7.17 prefetched (H200), a lead for a part-chunk
  // copied another way. Nor an instance whose narrowest row (past half its
  // threads' packs) holds more parameter bytes than a block stages.
  constexpr bool kRegParams =
      kNormParamsInRegisters<param_t, kThreads, kNormVecs, kVec, kCluster, kPeel, kEarly>;
  constexpr bool kCanStage =
      kEarly && kNormStagesParams<param_t, kThreads, kNormVecs, kVec, kCluster, kPeel>;
  extern __shared__ __align__(16) unsigned char param_stage[];
  const int stage_bytes = stage_elems * static_cast<int>(sizeof(param_t));
  param_t* const weight_stage = reinterpret_cast<param_t*>(param_stage);
  param_t* const bias_stage = reinterpret_cast<param_t*>(
      param_stage + (weight != nullptr ? (stage_bytes + 15) / 16 * 16 : 0));
  if constexpr (kCanStage) {
    if (weight != nullptr) {
      cp_async_bytes_to_shared(weight_stage, weight, stage_bytes, threadIdx.x, kBlock);
    }
    if (bias != nullptr) cp_async_bytes_to_shared(bias_stage, bias, stage_bytes, threadIdx.x, kBlock);
  }
  // Where it does not stage (parameters off 16 bytes, a wide instance, or
  // _C._set_norm_param_stage(2)), an early instance prefetches the
  // parameters' first prefetch_elems elements towards L2 instead: the late
  // read then finds them on chip. No registers or shared memory held.
  // Measured (H200, bf16 rms_norm, the latency probe, read late ->
  // prefetched): 1 x 2050 peeled 7.71 -> 6.98 us, 1 x 4100 7.46 -> 6.72; at 1
  // x 4096 it gives 6.14 where staging gives 5.41.
  if constexpr (kEarly && !kRegParams) {
    if (prefetch_elems > 0) {
      const int64_t bytes = static_cast<int64_t>(prefetch_elems) * sizeof(param_t);
      if (weight != nullptr) prefetch_bytes_to_l2(weight, bytes, threadIdx.x, kBlock);
      if (bias != nullptr) prefetch_bytes_to_l2(bias, bytes, threadIdx.x, kBlock);
    }
  }

  // The packs the registers keep: as loaded (16-bit values in half the
  // registers of their fp32 conversions, converted at each use) where fp32
  // would not fit (kNormKeepsPacks), else converted once.
  using Cached = std::conditional_t<
      kNormKeepsPacks<kThreads, kAdd, kPeel, kPackBytes, kEarly, (sizeof(param_t) > sizeof(scalar_t))>,
      RowPack, Pack<float, kVec>>;
  constexpr bool kCachesPacks = std::is_same_v<Cached, RowPack>;
  static_assert(kCachesPacks || !kAdd, "the fused add's fill below keeps packs");
  const auto as_floats = [&](const RowPack& a) {
    Pack<float, kVec> c;
    to_float(a, c.v);
    return c;
  };
  const auto cached_to_float = [&](const Cached& c, float (&v)[kVec]) {
    if constexpr (std::is_same_v<Cached, RowPack>) {
      to_float(c, v);
    } else {
#pragma unroll
      for (int j = 0; j < kVec; ++j) v[j] = c.v[j];
    }
  };
  // Pack pk of a parameter from q = weight + head or bias + head on (kPeel:
  // aligned to what that leaves, the same for every thread of the row).
  const auto param_pack = [](const param_t* q, int pk) {
    // (q + pk packs is as far off 16 bytes as q: a pack is 16 or 32 bytes)
    if constexpr (kPeel) {
      return load_pack_aligned_to<PPack>(q + pk * kVec,
                                         static_cast<int>(reinterpret_cast<uintptr_t>(q) % 16));
    }
    return reinterpret_cast<const PPack*>(q)[pk];
  };
  // kPeel: this thread's head element (edge 0, threads t < head) and tail
  // element (edge 1, t < tail), in fp32. Their row indices are recomputed at
  // each use rather than kept: under the 64-register cap, keeping them (and
  // the parameters' alignments) cost the peeled rms_norm 16-56 bytes of stack
  // and 3-5% of its speed against the narrow packs (H200, 2026-12-02).
  const auto has_edge = [&](int i) { return i == 0 ? t < head : t < tail; };
  const auto edge_index = [&](int i) -> int64_t {
    return i == 0 ? t : head + static_cast<int64_t>(row_packs) * kVec + t;
  };
  // kNormParamsInRegisters: the parameters of the packs the registers keep,
  // and of the peeled row's edges, loaded into registers just before the
  // row's own loads (the fill below), so that both are in flight at once,
  // and used at the stores (write_cached_from_registers). Issued after the
  // fill, behind a branch, they waited for the row: ptxas put the row's
  // conversions (which wait for its loads) before the branch. Held as the
  // raw words they were loaded as (common/pack.cuh's PackWords), converted
  // only at the stores: held as packs of 16-bit elements, each was split into
  // registers right after its load, so the next load, and the row's, waited
  // for it (the SASS of 2026-12-05: four trips to memory in turn before the
  // row's first load in layer_norm's 1 x 4096 kernel). The launcher takes
  // these instances only to do this (never to prefetch), so nothing here
  // asks stage_elems. RMSNorm has no bias: the `!kRms` loads compile away.
  // Only in the early instances: shared with the late path (the parameter
  // pointers, the pack loads, write), the late 16-bit layer_norm kernels
  // took 8-20 bytes of spills at the 64-register cap (ptxas, sm_90a).
  constexpr int kRegPacks = kRegParams ? kNormVecs : 1;
  using ParamWords = PackWords<param_t, kVec>;
  using EdgeWords = PackWords<param_t, 1>;
  ParamWords weight_regs[kRegPacks], bias_regs[kRegPacks];
  EdgeWords edge_weight[2], edge_bias[2];
  if constexpr (kRegParams) {
    const auto param_words = [&](const param_t* q, int pk) {
      if constexpr (kPeel) {  // (as param_pack)
        return load_pack_words_aligned_to<param_t, kVec>(
            q + pk * kVec, static_cast<int>(reinterpret_cast<uintptr_t>(q) % 16));
      } else {
        return load_pack_words(reinterpret_cast<const PPack*>(q) + pk);
      }
    };
#pragma unroll
    for (int k = 0; k < kNormVecs; ++k) {
      const int pk = first + t + k * kThreads;
      // Selected, not branched on: behind a `pk < end` branch, ptxas put the
      // row's first conversions before these loads in the few-rows instances
      // (128-256 threads, a pack a thread), which then waited for the row.
      const bool has_weight = pk < end && weight != nullptr;
      const bool has_bias = !kRms && pk < end && bias != nullptr;
      weight_regs[k] = has_weight ? param_words(weight + head, pk) : ParamWords{};
      bias_regs[k] = has_bias ? param_words(bias + head, pk) : ParamWords{};
    }
    if constexpr (kPeel) {  // the edges' elements
      const auto element_words = [](const param_t* q, int64_t e) {
        return load_pack_words(reinterpret_cast<const Pack<param_t, 1>*>(q + e));
      };
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        if (!has_edge(i)) continue;
        const int64_t e = edge_index(i);
        if (weight != nullptr) edge_weight[i] = element_words(weight, e);
        if (!kRms && bias != nullptr) edge_bias[i] = element_words(bias, e);
      }
    }
  }
  // Element j of a parameter held in registers, 1 (weight) or 0 (bias) where absent.
  const auto weight_at = [&](const auto& words, int j) {
    return weight != nullptr ? element_of(words, j) : 1.f;
  };
  const auto bias_at = [&](const auto& words, int j) {
    return !kRms && bias != nullptr ? element_of(words, j) : 0.f;
  };
  // kPeel: the edges' row elements (and residual's), loaded before the packs'
  // stores and arithmetic (kEdgesFirst) so that they share the packs' trip to
  // memory: loaded after the sums' stores (which may alias x, as far as the
  // compiler knows), the fused add's waited for a second trip.
  constexpr bool kEdgesFirst = kPeel && (kAdd || kEarly);
  scalar_t edge_x[2] = {}, edge_residual[2] = {};
  if constexpr (kEdgesFirst) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      if (!has_edge(i)) continue;
      const int64_t e = edge_index(i);
      edge_x[i] = x[row * in_stride + e];
      if constexpr (kAdd) edge_residual[i] = residual[row * row_length + e];
    }
  }
  Cached cache[kNormVecs];
  float sum = 0.f;
  if constexpr (kAdd) {
    // Every load of the cached packs first, then the sums' stores: with each
    // pack's store between its loads and the next pack's (sum_out may alias
    // x as far as the compiler knows), every pack waited out a round trip
    // to memory: 16384 x 4096 bf16 at 82% of copy, 0.89x Liger.
    RowPack a[kNormVecs], b[kNormVecs];
#pragma unroll
    for (int k = 0; k < kNormVecs; ++k) {
      const int pk = first + t + k * kThreads;
      if (pk < end) a[k] = pack_at(xr, pk), b[k] = pack_at(rr, pk);
    }
#pragma unroll
    for (int k = 0; k < kNormVecs; ++k) {
      const int pk = first + t + k * kThreads;
      cache[k] = pk < end ? add_pack(pk, a[k], b[k]) : RowPack{};  // (kAdd keeps packs)
    }
  } else {
#pragma unroll
    for (int k = 0; k < kNormVecs; ++k) {
      const int pk = first + t + k * kThreads;
      if constexpr (kCachesPacks && !kWholeLoads) {
        cache[k] = pk < end ? xr[pk] : XPack{};
      } else if constexpr (kCachesPacks) {
        cache[k] = pk < end ? pack_at(xr, pk) : RowPack{};
      } else {
        cache[k] = pk < end ? as_floats(pack_at(xr, pk)) : Cached{};
      }
    }
  }
  // The first pass's statistic: LayerNorm's sum, or in an early RMSNorm
  // instance (kOnePass) the sum of squares: it has no mean, so one pass is all
  // it needs. In two (the sum, dead for RMSNorm, then the squares) ptxas left
  // the peeled 1 x 2050 bf16 kernel's last pack load and its edges' until the
  // first three packs' squares were summed: a second trip to memory on a
  // latency-bound row. Summed in the late instances' order (the packs kept,
  // the packs re-read, then the edges): the two give the same bits (the tests
  // compare them). With kEdgesFirst, measured (H100, 2026-12-07, A/B in one
  // call): bf16 rms_norm 1-64 x 2050 -6 to -8% (1 row 6.08 -> 5.60 us), x 4100
  // -7 to -9%, add_rms_norm x 2050 -5 to -7%; aligned rows within the drift.
  constexpr bool kOnePass = kRms && kEarly;
  float sq = 0.f;
  const auto accumulate = [&](float v) {
    if constexpr (kOnePass) {
      sq += v * v;
    } else {
      sum += v;
    }
  };
#pragma unroll
  for (int k = 0; k < kNormVecs; ++k) {
    float v[kVec];
    cached_to_float(cache[k], v);
#pragma unroll
    for (int j = 0; j < kVec; ++j) accumulate(v[j]);
  }
  float edge[2] = {0.f, 0.f};
  if constexpr (kPeel) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      if (!has_edge(i)) continue;
      const int64_t e = edge_index(i);
      const scalar_t a = kEdgesFirst ? edge_x[i] : x[row * in_stride + e];
      if constexpr (kAdd) {
        const scalar_t s = static_cast<scalar_t>(static_cast<float>(a) +
                                                 static_cast<float>(
                                                     kEdgesFirst ? edge_residual[i]
                                                                 : residual[row * row_length + e]));
        sum_out[row * row_length + e] = s;
        edge[i] = static_cast<float>(s);
      } else {
        edge[i] = static_cast<float>(a);
      }
      if constexpr (!kOnePass) sum += edge[i];
    }
  }
  for (int pk = first + kNormVecs * kThreads + t; pk < end; pk += kThreads) {
    float v[kVec];
    load(pk, v, true);
#pragma unroll
    for (int j = 0; j < kVec; ++j) accumulate(v[j]);
  }
  if constexpr (kOnePass && kPeel) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      if (has_edge(i)) sq += edge[i] * edge[i];
    }
  }
  constexpr int kWarpsPerRow = kThreads / 32, kWarps = kBlock / 32;
  // RMSNorm has no mean: its sum's reduction (two block barriers for rows
  // of more than 32 threads) is skipped, not computed and dropped.
  float mean = 0.f;
  if constexpr (!kRms) {
    float total = group_sum<kWarpsPerRow, kWarps>(sum, scratch);
    if constexpr (kCluster > 1) total = cluster_total<kCluster>(total, &cta_part[0]);
    mean = total / n;
  }

  if constexpr (!kOnePass) {  // the squares about the mean: a second pass
#pragma unroll
    for (int k = 0; k < kNormVecs; ++k) {
      const int pk = first + t + k * kThreads;
      float v[kVec];
      cached_to_float(cache[k], v);
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        const float d = v[j] - mean;
        if (pk < end) sq += d * d;
      }
    }
    for (int pk = first + kNormVecs * kThreads + t; pk < end; pk += kThreads) {
      float v[kVec];
      load(pk, v, false);
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        const float d = v[j] - mean;
        sq += d * d;
      }
    }
    if constexpr (kPeel) {
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const float d = edge[i] - mean;
        if (has_edge(i)) sq += d * d;
      }
    }
  }
  float sq_total = group_sum<kWarpsPerRow, kWarps>(sq, scratch);
  if constexpr (kCluster > 1) sq_total = cluster_total<kCluster>(sq_total, &cta_part[1]);
  const float inv_std = rsqrtf(sq_total / n + eps);
  // No CTA leaves while a peer may still read its partials.
  if constexpr (kCluster > 1) cooperative_groups::this_cluster().sync();
  if constexpr (kCanStage) {
    // (stage_elems is the same for the whole block: every thread gets here)
    if (stage_elems > 0) {
      cp_async_wait_all();
      __syncthreads();
    }
  }

  const auto write = [&](int pk, const float (&in)[kVec], const param_t* wr, const param_t* br) {
    if constexpr (kWords && !kRms) {
      // LayerNorm's two parameters as the words they load as too (a PRMT an
      // element fewer, as the row's: the peeled 64-thread bf16 kernel 1912 ->
      // 1784 instructions, 200 -> 40 PRMTs). Measured (H100 A/B, 2026-12-07,
      // bf16): layer_norm 4096 / 16384 x 2050 -9.4 / -5.4%, add_layer_norm
      // -6.3 / -2.2%, the rest of both grids -8.5 to +3%. Not RMSNorm's
      // weight: the same change there grew norm_cuda.cu's early instances by
      // 280-350 instructions (sm_90a), though it shrank the peeled ones 1-5%.
      // (param_words above, again: one lambda hoisted out of that early
      // block for both grew every early rms_norm instance of norm_cuda.cu by
      // 176-232 instructions, sm_90a, though their code had not changed)
      const auto words = [&](const param_t* q) {
        if constexpr (kPeel) {  // (as param_pack)
          return load_pack_words_aligned_to<param_t, kVec>(
              q + pk * kVec, static_cast<int>(reinterpret_cast<uintptr_t>(q) % 16));
        } else {
          return load_pack_words(reinterpret_cast<const PPack*>(q) + pk);
        }
      };
      PackWords<param_t, kVec> w{}, b{};
      if (wr != nullptr) w = words(wr);
      if (br != nullptr) b = words(br);
      store_pack_words(yr + pk, pack_words_from<scalar_t, kVec>([&](int j) {
                         return normalize_by<kRms>(in[j], mean, inv_std,
                                                   weight != nullptr ? element_of(w, j) : 1.f,
                                                   bias != nullptr ? element_of(b, j) : 0.f);
                       }));
      return;
    }
    PPack w{}, b{};
    if (wr != nullptr) w = param_pack(wr, pk);
    if (br != nullptr) b = param_pack(br, pk);
    if constexpr (kWords) {
      store_pack_words(yr + pk, pack_words_from<scalar_t, kVec>([&](int j) {
                         return normalize_by<kRms>(
                             in[j], mean, inv_std,
                             weight != nullptr ? static_cast<float>(w.v[j]) : 1.f,
                             bias != nullptr ? static_cast<float>(b.v[j]) : 0.f);
                       }));
    } else {
      XPack out;
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        out.v[j] = static_cast<scalar_t>(normalize_by<kRms>(
            in[j], mean, inv_std, weight != nullptr ? static_cast<float>(w.v[j]) : 1.f,
            bias != nullptr ? static_cast<float>(b.v[j]) : 0.f));
      }
      yr[pk] = out;
    }
  };
  const auto write_cached = [&](const param_t* wr, const param_t* br) {
#pragma unroll
    for (int k = 0; k < kNormVecs; ++k) {
      const int pk = first + t + k * kThreads;
      if (pk < end) {
        float v[kVec];
        cached_to_float(cache[k], v);
        write(pk, v, wr, br);
      }
    }
  };
  const param_t* const wr = weight != nullptr ? weight + head : nullptr;
  const param_t* const br = bias != nullptr ? bias + head : nullptr;
  // The cached packs normalized with weight_regs and bias_regs: write's
  // arithmetic (normalize_by, every rounding explicit: the tests compare the
  // bits with the late read's).
  const auto write_cached_from_registers = [&]() {
    if constexpr (kRegParams) {
#pragma unroll
      for (int k = 0; k < kNormVecs; ++k) {
        const int pk = first + t + k * kThreads;
        if (pk >= end) continue;
        float in[kVec];
        cached_to_float(cache[k], in);
        if constexpr (kWords) {
          store_pack_words(yr + pk, pack_words_from<scalar_t, kVec>([&](int j) {
                             return normalize_by<kRms>(in[j], mean, inv_std,
                                                       weight_at(weight_regs[k], j),
                                                       bias_at(bias_regs[k], j));
                           }));
        } else {
          XPack out;
#pragma unroll
          for (int j = 0; j < kVec; ++j) {
            out.v[j] = static_cast<scalar_t>(normalize_by<kRms>(
                in[j], mean, inv_std, weight_at(weight_regs[k], j), bias_at(bias_regs[k], j)));
          }
          yr[pk] = out;
        }
      }
    }
  };
  // Staged, the launcher copies every pack the registers keep or none, so the
  // cached packs take one branch or the other, the same for the whole block,
  // each with its loads' address space known: keeping both pointer pairs live
  // (a choice a pack) spilled 48-72 bytes in the fp32-parameter layer_norm
  // kernels at the 64-register cap.
  if (kRegParams) {
    write_cached_from_registers();
  } else if (kCanStage && stage_elems > 0) {
    write_cached(weight != nullptr ? weight_stage : nullptr, bias != nullptr ? bias_stage : nullptr);
  } else {
    write_cached(wr, br);
  }
  for (int pk = first + kNormVecs * kThreads + t; pk < end; pk += kThreads) {
    float in[kVec];
    load(pk, in, false);
    write(pk, in, wr, br);
  }
  if constexpr (kPeel) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      if (has_edge(i)) {
        const int64_t e = edge_index(i);
        const float v =
            kRegParams ? normalize_by<kRms>(edge[i], mean, inv_std, weight_at(edge_weight[i], 0),
                                            bias_at(edge_bias[i], 0))
                       : normalize<kRms>(edge[i], mean, inv_std, weight, bias, e);
        y[row * row_length + e] = static_cast<scalar_t>(v);
      }
    }
  }
}

}  // namespace memopt
