// The vectorized norm kernel's launch (kernels/v04_vectorized.cuh): threads a
// row sized to the row, several narrow rows a block, a pack width of 16 bytes
// (norm_cuda.cu) or narrower (norm_packs_{8,4,2}.cu, for widths off the
// 16-byte pack). Included by each, so that two cores compile the groups of
// instantiations in parallel.
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <type_traits>

#include "common/cuda_launch.cuh"
#include "common/device_info.h"
#include "common/dispatch.h"
#include "common/pack.cuh"
#include "norm/kernels/v04_vectorized.cuh"
#include "norm/norm_common.h"

namespace memopt {

// Whole packs of `bytes` a row, the rows and every pointer aligned to them:
// whether the vectorized kernel with that pack width can read `p` (and, for
// the fused add, `residual` and `sum`). Weight and bias packs hold as many
// elements as the input's, so they align to their own element size times that.
inline bool packs_fit(const NormRows& p, int64_t bytes, const at::Tensor& residual = {},
                      const at::Tensor& sum = {}) {
  const int64_t elem = static_cast<int64_t>(p.input.element_size());
  if (bytes < elem || bytes % elem != 0) return false;
  const int64_t vec = bytes / elem;
  const auto aligned = [](const at::Tensor& t, int64_t to) {
    return !t.defined() || reinterpret_cast<uintptr_t>(t.const_data_ptr()) % to == 0;
  };
  const int64_t param_bytes = vec * (p.weight.defined() ? p.weight.element_size()
                                     : p.bias.defined() ? p.bias.element_size()
                                                        : elem);
  // The kernel's in-row pack indices are 32-bit, with headroom for index +
  // threads x packs (block_smem takes wider rows).
  return p.row_length % vec == 0 && p.row_length / vec < (int64_t{1} << 30) &&
         p.in_stride % vec == 0 && aligned(p.input, bytes) && aligned(p.out, bytes) &&
         aligned(residual, bytes) && aligned(sum, bytes) && aligned(p.weight, param_bytes) &&
         aligned(p.bias, param_bytes);
}

// Whether the peeled kernel (kPeel) can read `p`: every row of the output (and
// of `residual` and `sum`) as far off a 16-byte boundary as the same row of
// the input, so that one head aligns them all; fewer than 2^30 packs a row.
// Any width, any element-aligned pointer, any parameter alignment.
inline bool peel_fits(const NormRows& p, const at::Tensor& residual = {},
                      const at::Tensor& sum = {}) {
  const int64_t elem = static_cast<int64_t>(p.input.element_size());
  const auto addr = [](const at::Tensor& t) {
    return static_cast<int64_t>(reinterpret_cast<uintptr_t>(t.const_data_ptr()) % 16);
  };
  const int64_t in_at = addr(p.input);
  // Row r of the input starts (in_at + r * in_stride * elem) mod 16 off, of an
  // output-shaped tensor t (addr(t) + r * row_length * elem): equal for every
  // r when the starts and the row steps agree mod 16.
  const bool steps_agree = ((p.in_stride - p.row_length) * elem) % 16 == 0;
  const auto same_rows = [&](const at::Tensor& t) { return !t.defined() || addr(t) == in_at; };
  return (elem == 2 || elem == 4) && steps_agree && same_rows(p.out) && same_rows(residual) &&
         same_rows(sum) && p.row_length / (16 / elem) < (int64_t{1} << 30);
}

// How the kernel's early instances (kernels/v04_vectorized.cuh, kEarly) fetch
// weight and bias. Those of up to 256 threads a row (kNormParamsInRegisters)
// load the packs the registers keep into registers with the row, for grids of
// one wave of that instance, rms_norm's of up to 128 threads at any grid
// (param_stage says why). Wider, they stage: the elements of weight and bias
// a block copies into shared memory, the part of a row its registers keep
// (not the peeled rows), where that is whole 16-byte chunks and fits in
// kNormMaxParamStageBytes (kernels/v04_vectorized.cuh), both start 16-byte
// aligned (cp.async's 16-byte copies) and the grid is half a wave at most (a
// block for every other SM): a latency-bound launch, where the parameters'
// read after the reductions is a second trip to HBM on every block's
// critical path. Measured (H200, bf16 rms_norm x 4096,
// benchmarks/tune/norm_latency_probe.py, kernel timer, us, read late ->
// staged): 1 row 6.72 -> 5.41, 8 rows 6.72 -> 5.47, 64 rows 6.82 -> 6.24;
// past one wave every block copies the whole parameter row again and waits
// for it: 512 rows 8.51 -> 11.49, 4096 rows 23.26 -> 47.36
// (benchmarks/results/tune/norm_latency_probe_staged_h200.json). Staged to
// one wave, 128 rows of 4096 (128 blocks) lost in the models suite: rms_norm
// 5.86 -> 6.53 us, add_rms_norm 7.20 -> 7.90, where 512 rows (not staged)
// drifted 0.26 (benchmarks/results/models_h200.json at 2fcf8b9 against
// ae3ee71); at 64 rows it gained (6.72 -> 6.18,
// norm_latency_probe_narrow_staged_h200.json): half the SMs is the bound
// between. 0: no staging (the kernel reads the parameters from global memory
// after the reductions).
// Where the instance cannot stage (kNormStagesParams) or the parameters are
// not 16-byte aligned, the same small grids ask the kernel to prefetch each
// parameter's row towards L2 instead (prefetch_elems, up to
// kNormMaxParamPrefetchBytes), so that the late read is an L2 hit.
// _C._set_norm_param_stage(0) turns all three off, (2) prefetches where the
// rule would stage or prefetch and reads late where it would use registers.
// {} (none): the launcher takes the instance without any (kEarly false).
struct ParamStage {
  int elems = 0;           // a parameter's elements staged or held in registers (stage_elems)
  size_t bytes = 0;        // the dynamic shared memory they take, weight and bias
  int prefetch_elems = 0;  // a parameter's elements prefetched towards L2 instead
};

// A parameter's bytes prefetched at most: a row this wide (64K bf16) is not
// latency-bound at its late read.
constexpr int64_t kNormMaxParamPrefetchBytes = 128 * 1024;

// `register_wave()`: the blocks the early instance runs at once on the device,
// where it loads the parameters into registers (kNormParamsInRegisters);
// asked only where the answer matters (no parameters, or read late: never).
template <typename scalar_t, typename param_t, bool kRms, bool kAdd, int kThreads, int kVecs,
          int kPackBytes, bool kPeel, typename Wave>
ParamStage param_stage(const NormRows& p, int64_t blocks, Wave register_wave) {
  const int64_t params = (p.weight.defined() ? 1 : 0) + (p.bias.defined() ? 1 : 0);
  const NormParamFetch fetch = norm_param_stage();
  if (params == 0 || fetch == NormParamFetch::kLate) return {};
  constexpr int kVec = kPackBytes / static_cast<int>(sizeof(scalar_t));
  if constexpr (kNormParamsInRegisters<param_t, kThreads, kVecs, kVec, 1, kPeel, true>) {
    // Into registers (kernels/v04_vectorized.cuh): any alignment, any width,
    // peeled rows too; `elems` only says so, no shared memory. Up to one
    // wave of the instance, not half: no block copies anything again, and
    // within one wave each block's late read of the parameters (an L2 hit
    // after the first block's) is on its own critical path. Measured before:
    // bf16 rms_norm 512 x 4096 read late 8.16 us, no weight 7.10
    // (norm_latency_probe_packs_w4096_h200.json). They never prefetch
    // (kPrefetch: read late).
    // rms_norm (not fused: one parameter) of up to 128 threads a row holds
    // them at any grid. Measured past one wave (H100, 2026-12-07,
    // benchmarks/tune/norm_few_rows_sweep.py, 2048-16384 rows, one build,
    // time read late / in registers; --params-any-grid at 768, 1024, 4096,
    // --params-late at 2048-8192): rms_norm bf16 1.017 geomean (0.991-1.054:
    // 2048 x 4096 17.34 -> 16.45 us) and 2048-4100 columns 0.97-1.045, fp32
    // 1.015 (0.990-1.062: 4096 x 768 14.30 -> 13.47) and 2048-8192 1.00-1.05;
    // but 256-thread bf16 rows lost (16384 x 6144 138.3 -> 155.9, x 8192 -3%)
    // and so did layer_norm (0.981 / 0.998) and the fused adds (0.950-1.016;
    // fp32 add_layer_norm 4096 x 4096 0.925, two parameters' packs in an
    // uncapped kernel), which read late past one wave
    // (benchmarks/results/tune/norm_params_{any_grid,late}_h100.json).
    const bool any_grid = fetch == NormParamFetch::kEarlyAnyGrid ||
                          (fetch == NormParamFetch::kEarly && kRms && !kAdd && kThreads <= 128);
    if (!any_grid && (fetch != NormParamFetch::kEarly || blocks > register_wave())) return {};
    return {static_cast<int>(std::min<int64_t>(p.row_length, int64_t{kThreads} * kVecs * kVec)),
            0, 0};
  }
  if (2 * blocks > sm_count()) return {};
  if constexpr (kNormStagesParams<param_t, kThreads, kVecs, kVec, 1, kPeel>) {
    const auto aligned = [](const at::Tensor& t) {
      return !t.defined() || reinterpret_cast<uintptr_t>(t.const_data_ptr()) % 16 == 0;
    };
    // The packs the registers keep.
    const int64_t elems = std::min<int64_t>(p.row_length, int64_t{kThreads} * kVecs * kVec);
    // Whole 16-byte chunks only (common/cp_async.cuh says why): a part the
    // registers keep that ends mid-chunk (a whole row of 4097 bf16) is
    // prefetched instead.
    const int64_t param_bytes = elems * static_cast<int64_t>(sizeof(param_t));
    const int64_t bytes = param_bytes * params;
    if (fetch == NormParamFetch::kEarly && param_bytes % 16 == 0 &&
        bytes <= kNormMaxParamStageBytes && aligned(p.weight) && aligned(p.bias)) {
      return {static_cast<int>(elems), static_cast<size_t>(bytes), 0};
    }
  }
  constexpr int64_t kMaxPrefetch = kNormMaxParamPrefetchBytes / static_cast<int64_t>(sizeof(param_t));
  return {0, 0, static_cast<int>(std::min<int64_t>(p.row_length, kMaxPrefetch))};
}

// kAdd: the fused add + norm, reading `residual` and writing `sum` beside
// the normalized output.
template <typename scalar_t, typename param_t, bool kRms, int kThreads, bool kAdd,
          int kVecs = kRowVecs, int kPackBytes = 16, bool kPeel = false>
void launch_vectorized(const NormRows& p, const at::Tensor& residual, const at::Tensor& sum,
                       cudaStream_t stream) {
  constexpr int kBlock = kThreads < kNormVecMinBlock ? kNormVecMinBlock : kThreads;
  constexpr int64_t kRowsPerBlock = kBlock / kThreads;
  const auto blocks = static_cast<unsigned>(ceil_div<int64_t>(p.rows, kRowsPerBlock));
  const auto early_kernel = norm_vectorized_kernel<scalar_t, param_t, kRms, kThreads, kAdd, 1,
                                                   kVecs, kPackBytes, kPeel, true>;
  const auto register_wave = [&]() -> int64_t {
    static std::atomic<int> early_blocks_per_sm[kMaxDevices];
    return int64_t{sm_count()} * resident_blocks_per_sm(early_kernel, kBlock, early_blocks_per_sm);
  };
  const ParamStage stage =
      param_stage<scalar_t, param_t, kRms, kAdd, kThreads, kVecs, kPackBytes, kPeel>(
          p, blocks, register_wave);
  const auto launch = [&](auto kernel) {
    kernel<<<blocks, kBlock, stage.bytes, stream>>>(
        p.input.const_data_ptr<scalar_t>(),
        p.weight.defined() ? p.weight.const_data_ptr<param_t>() : nullptr,
        p.bias.defined() ? p.bias.const_data_ptr<param_t>() : nullptr,
        p.out.mutable_data_ptr<scalar_t>(), p.rows, p.row_length, p.in_stride, p.eps,
        kAdd ? residual.const_data_ptr<scalar_t>() : nullptr,
        kAdd ? sum.mutable_data_ptr<scalar_t>() : nullptr, stage.elems, stage.prefetch_elems);
  };
  if (stage.elems > 0 || stage.prefetch_elems > 0) {
    launch(early_kernel);
  } else {
    launch(norm_vectorized_kernel<scalar_t, param_t, kRms, kThreads, kAdd, 1, kVecs, kPackBytes,
                                  kPeel, false>);
  }
}

// The threads a row needs to keep its packs, kVecs a thread, counted down to
// the power of two below when the row is only a few packs past it (at most
// one an eighth of its threads): those few re-read the extra packs. N = 4100
// in fp32 is 1025 packs; 512 threads, two packs each, ran 16384 x 4100
// rms_norm at 77% of 4096's GB/s (H200, 2026-12-02). Not counted down
// (round_down false) in grids of norm_whole_rows rows or fewer: there a row is
// latency-bound and the re-read is one more trip to memory at its end (fp32
// add_layer_norm 1 x 4100 at 0.84 of 4096's GB/s, H100 grid at 0a9a4b6).
inline int64_t row_threads(int64_t packs, int64_t vecs, bool round_down = true) {
  const int64_t needed = ceil_div<int64_t>(packs, vecs);
  int64_t below = 32;
  while (below * 2 < needed) below *= 2;
  return round_down && needed > below && packs - below * vecs <= below / 8 ? below : needed;
}

// Grids of kNormFewRows16 16-bit rows or kNormFewRows32 fp32 rows or fewer
// (norm_common.h; the tuning switch may set one bound for both) spread each
// 16-byte-pack row of up to 256 packs (2048 16-bit columns) over 128-256
// threads, one pack a thread, instead of four (launch_vectorized_sized). A
// few rows are latency-bound: the time is the row's trip to memory plus each
// warp's chain of instructions, and four packs a thread made that chain long
// on the few warps a row had. Nsight Compute on an H100 (2026-12-07,
// benchmarks/tune/norm_small_rows_ncu.py, each kernel's own duration, caches
// flushed), bf16, ours against torch.compile's kernel: rms_norm 1 x 2048
// 3.71 us / 3.39 (64 threads, 1238 warp instructions on 2 warps; Triton 512
// threads, 1552 on 16), add_rms_norm 1 x 1024 3.87 / 3.07 (32 threads), 64 x
// 1024 4.26 / 3.26, layer_norm 1 x 2048 4.35 / 3.84. Measured (H100,
// 2026-12-07, A/B in one call, Liger in the same processes), ours x Liger at
// 1-64 rows of 768-2050, bf16: rms_norm 0.96-1.01 -> 0.99-1.05 (2050:
// 0.91-0.93 -> 0.99-1.04), add_rms_norm 0.90-0.97 -> 0.96-1.05, layer_norm
// 0.88-0.97 -> 0.93-1.00; fp32 rms_norm (768-1024) within 1%.
// The bound, from both launches of one build on the same inputs (H100,
// benchmarks/tune/norm_few_rows_sweep.py, all four ops at 768-2050 columns,
// four packs' time / one pack's, geomean (range)): bf16 128 rows 1.05
// (1.00-1.18), 512 rows 1.02 (0.99-1.07), 2048 rows 0.93 (0.77-1.10): past
// one wave (2048 blocks of 128-256 threads) the four times as many warps and
// their cross-warp reductions cost more than the shorter chains buy; fp32 128
// rows 1.015 (1.00-1.03), 512 rows 0.997 (0.98-1.03), so fp32 stops at 128
// (benchmarks/results/tune/norm_few_rows_sweep_h100.json).
// The row's sums then take another order than in a larger grid, so its
// output may differ from that grid's in the last bit (within the ops'
// tolerance against float64; each grid is deterministic run to run).
// 256: the register parameters' limit. Two packs a thread at 256 threads (4096
// columns) were left out: ptxas issued its rms_norm weight loads after the
// row's squares (tests/test_sass_audit.py's load-order check, 2026-12-07).
constexpr int kNormFewRowsMaxThreads = 256;

// The fewest threads a row (32 ... 1024) whose packs each hold it. A thread
// keeps the values the 16-byte kernel keeps (kRowVecs packs of 16 bytes, or
// kWideRowVecs for wide fp32 rows): 16 / kPackBytes times as many packs.
// kPeel: 16-byte packs with each row's head and tail as single elements
// (peel_fits says when).
template <typename scalar_t, typename param_t, bool kRms, bool kAdd = false, int kPackBytes = 16,
          bool kPeel = false>
void launch_vectorized_sized(const NormRows& p, cudaStream_t stream,
                             const at::Tensor& residual = {}, const at::Tensor& sum = {}) {
  constexpr int kScale = 16 / kPackBytes;
  constexpr int kVecs = kRowVecs * kScale, kWideVecs = kWideRowVecs * kScale;
  const int64_t packs = p.row_length / (kPackBytes / static_cast<int64_t>(sizeof(scalar_t)));
  if constexpr (kPackBytes == 16) {
    if (p.rows <= norm_few_rows(sizeof(scalar_t)) && packs <= kNormFewRowsMaxThreads) {
      constexpr int kWide = kNormFewRowsMaxThreads;
      if (packs <= kWide / 2) {
        return launch_vectorized<scalar_t, param_t, kRms, kWide / 2, kAdd, 1, 16, kPeel>(
            p, residual, sum, stream);
      }
      return launch_vectorized<scalar_t, param_t, kRms, kWide, kAdd, 1, 16, kPeel>(p, residual,
                                                                                   sum, stream);
    }
  }
  if constexpr (sizeof(scalar_t) == 4 && !kAdd) {
    // row_vecs counts 16-byte packs: the same threshold in values.
    if (row_vecs(packs / kScale, sizeof(scalar_t)) == kWideRowVecs) {
      if (packs <= 512 * kWideVecs) {
        return launch_vectorized<scalar_t, param_t, kRms, 512, false, kWideVecs, kPackBytes, kPeel>(
            p, residual, sum, stream);
      }
      return launch_vectorized<scalar_t, param_t, kRms, 1024, false, kWideVecs, kPackBytes, kPeel>(
          p, residual, sum, stream);
    }
  }
  const auto launch = [&](auto threads) {
    launch_vectorized<scalar_t, param_t, kRms, decltype(threads)::value, kAdd, kVecs, kPackBytes,
                      kPeel>(p, residual, sum, stream);
  };
  const int64_t threads =
      row_threads(packs, kVecs, p.rows > norm_whole_rows(sizeof(scalar_t)));
  if (threads <= 32) return launch(std::integral_constant<int, 32>{});
  if (threads <= 64) return launch(std::integral_constant<int, 64>{});
  if (threads <= 128) return launch(std::integral_constant<int, 128>{});
  if (threads <= 256) return launch(std::integral_constant<int, 256>{});
  // The fused add needs more registers than 1024 threads leave (64 each:
  // ptxas spilled 84-132 bytes), so it stops at 512 and re-reads its sum
  // past the registers.
  if (threads <= 512 || kAdd) return launch(std::integral_constant<int, 512>{});
  launch_vectorized<scalar_t, param_t, kRms, 1024, false, kVecs, kPackBytes, kPeel>(
      p, residual, sum, stream);
}

// The vectorized norm at one pack width, every dtype and parameter type
// (declared in norm_narrow_packs.h): norm_packs_{8,4,2}.cu instantiate a
// width under 16 bytes each, norm_packs_peeled.cu the 16-byte peeled kernel
// (kPeel).
template <bool kRms, int kPackBytes, bool kAdd, bool kPeel>
void launch_norm_packs(const NormRows& p, cudaStream_t stream, const at::Tensor& residual,
                       const at::Tensor& sum) {
  MEMOPT_DISPATCH_FLOAT_TYPES(p.input.scalar_type(), "memopt_norm_packs", [&] {
    if constexpr (kPackBytes >= static_cast<int>(sizeof(scalar_t))) {
      if (p.fp32_params) {
        launch_vectorized_sized<scalar_t, float, kRms, kAdd, kPackBytes, kPeel>(p, stream,
                                                                                residual, sum);
      } else {
        launch_vectorized_sized<scalar_t, scalar_t, kRms, kAdd, kPackBytes, kPeel>(p, stream,
                                                                                   residual, sum);
      }
    }
  });
}

}  // namespace memopt
