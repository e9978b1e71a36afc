// Launcher of the gemv rung (kernels/gemv.cuh): the skinny-M bfloat16 /
// float16 GEMM for decode shapes (tuned for M tokens in {1, 8, 16, 64}, N in
// {4096, 11008}, K = 4096; correct for any M, N, K >= 1 and both B layouts).
// No ATen headers: gemm_cuda.cu checks the inputs, owns the tensors and checks
// the launch (C10_CUDA_KERNEL_LAUNCH_CHECK, which also reports a failed
// workspace allocation: cudaGetLastError returns the last error of any
// runtime call).
//
// What it picks:
// - The shape by tokens a block (M rounded up to 8, 16, 32, 64 for k-major W;
//   8, 16 for row-major B). Larger M runs blocks of the largest shape side by
//   side, token block fastest in the grid, so they share each weight tile
//   through L2.
// - 16-byte loads when a and b are 16-byte aligned and their row strides are
//   multiples of 8 elements; otherwise the 2-byte-load twin of the 8-token
//   shape (correct; ~8x the load instructions, not tuned).
// - Split-K across blocks when the grid holds fewer than kMinWarpsPerSm warps
//   an SM: fp32 partials in a stream-ordered workspace (cudaMallocAsync, a
//   cudaMemsetAsync of the tile counters, cudaFreeAsync), summed by each
//   tile's last block.
//
// Expected on the H200 (132 SMs, 4.2 TB/s copy), k-major W 4096 x 4096 bf16:
// - M = 1, 8, 16: 256 blocks of 8 warps (15.5 warps an SM), 8 weight loads of
//   16 bytes in flight a lane: ~64 KB an SM against the ~32 KB that 4.2 TB/s
//   x ~1 us loaded latency / 132 SMs needs. 32 MB at >= 3.4 TB/s is <= 10 us
//   (cuBLAS: 18.4 us at M = 1, 18.7 at M = 16).
// - M = 64: 64 tiles of 64 rows x 4 splits = 256 blocks; x crosses L2 once
//   per 64-row tile (as many bytes as the weights, plus 4 MB of partials).
//   At 10 us the 2.1 GFLOP need ~210 TFLOP/s of mma.sync.
// - Row-major B: 64 columns a warp, 4 splits at N = 4096 (the same bytes in
//   flight, plus the workspace round trip): expected near the k-major figure.
// - N = 11008: 688 blocks at M <= 16 (no split; 3 blocks an SM resident, 1.7
//   waves), 172 x 2 splits at M = 64.
// Measured (H200, first version): M = 1 at 1.94 TB/s (N = 4096) and 2.79 TB/s
// (N = 11008), not the >= 3.4 expected above; M = 64 at 0.42-0.53x cuBLAS.
// See kernels/gemv.cuh and docs/perf-notes.md.
#include <algorithm>
#include <climits>
#include <cstdint>

#include "common/device_info.h"
#include "common/kernel_registry.h"
#include "gemm/half_gemm.h"
#include "gemm/kernels/gemv.cuh"

namespace memopt {
namespace {

using gemv::Config;
using gemv::KMajor;
using gemv::Params;
using gemv::RowMajor;
using gemv::Tile;

// Shapes: Config<token tiles, row groups a warp, warps along n, warps along k,
// steps a lane loads at once, min blocks an SM (register cap 65536 / (threads
// x blocks))>. Rows of a k-major block = warps along n x row groups x 16; each
// block covers >= its tokens in rows, so x crosses L2 at most once per weight
// byte. ptxas (sm_90a): registers in the comment, no spills.
// M <= 8: 16 rows, 8 warps split K: N = 4096 gives 256 blocks, no split-K;
// 8 weight loads in flight a lane (2 rows x 4 steps). 80 registers.
using KMajorM8 = Config<1, 1, 1, 8, 4, 3>;
// M <= 16: the same. 110 registers.
using KMajorM16 = Config<2, 1, 1, 8, 4, 2>;
// M <= 32: 32 rows, 2 x 4 warps, 8 loads in flight a lane. 110 registers.
using KMajorM32 = Config<4, 1, 2, 4, 2, 2>;
// M <= 64: 64 rows, 4 x 2 warps; 32 accumulators a lane, 4 weight loads in
// flight (2 rows x 2 steps: 4 steps spill at the 128-register cap that 2
// blocks an SM impose). 128 registers.
using KMajorM64 = Config<8, 1, 4, 2, 2, 2>;
// Row-major: a warp is 64 columns x 16 k a step (4 loads of 16 bytes a lane),
// two steps a batch: 8 loads in flight a lane. 16 accumulators a token tile
// (4 mma), so the shapes stop at 16 tokens: 32 needed 148 registers (one
// block an SM). 94 and 116 registers.
using RowMajorM8 = Config<1, 1, 1, 8, 2, 2>;
using RowMajorM16 = Config<2, 1, 1, 8, 2, 2>;
// The 2-byte-load twins (misaligned operands): one step a batch, since each
// 16-byte fragment takes 8 registers until it is packed. 64 and 118 registers.
using KMajorScalar = Config<1, 1, 1, 8, 1, 2>;
using RowMajorScalar = Config<1, 1, 1, 8, 1, 2>;

// Below this many warps an SM, split K across blocks: 12 warps x 32 lanes x 8
// loads x 16 bytes = 48 KB in flight an SM, above the ~32 KB that copy speed
// needs (Little's law: 4.2 TB/s x ~1 us / 132 SMs). At 4096 x 4096 it splits
// M = 64 (512 warps -> 4 splits) and row-major (512 -> 4), never M <= 16.
constexpr int64_t kMinWarpsPerSm = 12;

// Largest 1-D grid; larger problems run in token chunks.
constexpr int64_t kMaxBlocks = INT_MAX;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool is_16_byte_aligned(const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; }

// 16-byte loads need 16-byte aligned bases and rows starting on 16-byte
// boundaries (strides of 8 elements); a stride is irrelevant when only one
// row of that operand exists.
bool operands_allow_16_byte_loads(const HalfGemmArgs& p) {
  const bool a_ok = is_16_byte_aligned(p.a) && (p.M == 1 || p.a_stride_m % 8 == 0);
  const int64_t b_rows = p.b_k_major ? p.N : p.K;
  const bool b_ok = is_16_byte_aligned(p.b) && (b_rows == 1 || p.b_stride % 8 == 0);
  return a_ok && b_ok;
}

// One launch for tokens [0, p.M) of p (the caller cuts M into chunks).
template <class Layout, class Cfg, class Elem, bool kVec>
void launch_tokens(const HalfGemmArgs& args, cudaStream_t stream) {
  using Shape = Tile<Layout, Cfg>;
  Params p{};
  p.a = static_cast<const uint16_t*>(args.a);
  p.a_stride_m = args.a_stride_m;
  p.b = static_cast<const uint16_t*>(args.b);
  p.b_stride = args.b_stride;
  p.bias = static_cast<const uint16_t*>(args.bias);
  p.out = static_cast<uint16_t*>(args.out);
  p.M = args.M;
  p.N = args.N;
  p.K = args.K;
  p.act = args.act;
  p.token_blocks = ceil_div(p.M, Cfg::kTokens);
  p.n_tiles = ceil_div(p.N, Shape::kBlockN);
  const int64_t tiles = p.token_blocks * p.n_tiles;

  // Split K so the grid holds kMinWarpsPerSm warps an SM, keeping at least
  // one whole batch of steps a warp (kWarpsK x kBatch steps a split).
  const int64_t steps = ceil_div(p.K, Layout::kStepK);
  const int64_t batch_steps = Cfg::kWarpsK * Cfg::kBatch;
  const int64_t warps = tiles * (Cfg::kThreads / 32);
  const int64_t wanted_warps = kMinWarpsPerSm * sm_count();
  int64_t splits = 1;
  if (warps < wanted_warps) {
    splits = std::min(ceil_div(wanted_warps, warps), std::max<int64_t>(steps / batch_steps, 1));
  }
  // Whole batches a split, then no split left empty.
  p.steps_per_split = ceil_div(ceil_div(steps, splits), batch_steps) * batch_steps;
  p.splits = ceil_div(steps, p.steps_per_split);
  const int64_t blocks = tiles * p.splits;
  const auto kernel = gemv::gemv_kernel<Layout, Cfg, Elem, kVec>;

  if (p.splits == 1) {
    kernel<<<static_cast<unsigned>(blocks), Cfg::kThreads, 0, stream>>>(p);
    return;
  }
  const size_t partial_bytes = static_cast<size_t>(p.splits * p.M * p.N) * sizeof(float);
  const size_t counter_bytes = static_cast<size_t>(tiles) * sizeof(unsigned);
  void* workspace = nullptr;
  if (cudaMallocAsync(&workspace, partial_bytes + counter_bytes, stream) != cudaSuccess) return;
  p.partials = static_cast<float*>(workspace);
  p.tile_counters = reinterpret_cast<unsigned*>(static_cast<char*>(workspace) + partial_bytes);
  if (cudaMemsetAsync(p.tile_counters, 0, counter_bytes, stream) == cudaSuccess) {
    kernel<<<static_cast<unsigned>(blocks), Cfg::kThreads, 0, stream>>>(p);
  }
  cudaFreeAsync(workspace, stream);
}

// Cuts M into chunks whose grid fits one launch (only for absurd M x N).
template <class Layout, class Cfg, class Elem, bool kVec>
void launch_shape(const HalfGemmArgs& p, cudaStream_t stream) {
  const int64_t n_tiles = ceil_div(p.N, Tile<Layout, Cfg>::kBlockN);
  const int64_t chunk = std::max<int64_t>(kMaxBlocks / n_tiles, 1) * Cfg::kTokens;
  for (int64_t m0 = 0; m0 < p.M; m0 += chunk) {
    HalfGemmArgs part = p;
    part.a = static_cast<const uint16_t*>(p.a) + m0 * p.a_stride_m;
    part.out = static_cast<uint16_t*>(p.out) + m0 * p.N;
    part.M = std::min(chunk, p.M - m0);
    launch_tokens<Layout, Cfg, Elem, kVec>(part, stream);
  }
}

template <class Elem>
void launch_dtype(const HalfGemmArgs& p, cudaStream_t stream) {
  const bool vec = operands_allow_16_byte_loads(p);
  if (p.b_k_major) {
    if (!vec) return launch_shape<KMajor, KMajorScalar, Elem, false>(p, stream);
    if (p.M <= 8) return launch_shape<KMajor, KMajorM8, Elem, true>(p, stream);
    if (p.M <= 16) return launch_shape<KMajor, KMajorM16, Elem, true>(p, stream);
    if (p.M <= 32) return launch_shape<KMajor, KMajorM32, Elem, true>(p, stream);
    return launch_shape<KMajor, KMajorM64, Elem, true>(p, stream);
  }
  if (!vec) return launch_shape<RowMajor, RowMajorScalar, Elem, false>(p, stream);
  if (p.M <= 8) return launch_shape<RowMajor, RowMajorM8, Elem, true>(p, stream);
  return launch_shape<RowMajor, RowMajorM16, Elem, true>(p, stream);
}

}  // namespace

void launch_gemm_gemv(const HalfGemmArgs& p, cudaStream_t stream) {
  if (p.M <= 0 || p.N <= 0 || p.K <= 0) return;
  if (p.dtype == HalfType::bf16) {
    launch_dtype<gemv::Bf16>(p, stream);
  } else {
    launch_dtype<gemv::Fp16>(p, stream);
  }
}

// kernel_info (common/kernel_registry.h): the 16-byte-load shapes in bfloat16
// (the tensor-core benchmark's dtype, decode rows M = 1, 8, 16, 64): linear's
// weight [N, K] (k-major) and gemm's row-major b.
namespace {

using gemv::gemv_kernel;

MEMOPT_REGISTER_KERNELS(
    kGemvKernels,
    {{"linear", "gemv", "bfloat16, M <= 8",
      kernel_address(gemv_kernel<KMajor, KMajorM8, gemv::Bf16, true>)},
     {"linear", "gemv", "bfloat16, M <= 16",
      kernel_address(gemv_kernel<KMajor, KMajorM16, gemv::Bf16, true>)},
     {"linear", "gemv", "bfloat16, M <= 32",
      kernel_address(gemv_kernel<KMajor, KMajorM32, gemv::Bf16, true>)},
     {"linear", "gemv", "bfloat16, larger M (64 tokens a block)",
      kernel_address(gemv_kernel<KMajor, KMajorM64, gemv::Bf16, true>)},
     {"gemm", "gemv", "bfloat16, M <= 8",
      kernel_address(gemv_kernel<RowMajor, RowMajorM8, gemv::Bf16, true>)},
     {"gemm", "gemv", "bfloat16, larger M (16 tokens a block)",
      kernel_address(gemv_kernel<RowMajor, RowMajorM16, gemv::Bf16, true>)}});

}  // namespace

}  // namespace memopt
