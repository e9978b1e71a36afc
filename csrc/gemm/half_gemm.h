// The launch interface of the tensor-core GEMM rungs (bfloat16 / float16 in
// and out, fp32 accumulation), free of ATen headers like ladder.h so each
// kernel file compiles alone and in parallel. gemm_cuda.cu checks the inputs,
// lays the operands out as below and picks the rung.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "common/activation.h"

namespace memopt {

// tf32: float32 storage (inputs, bias and output) that the wgmma rung's
// tensor cores read as tf32 (torch.backends.cuda.matmul.allow_tf32).
enum class HalfType { bf16, fp16, tf32 };

// The wgmma rung's output tile, rows x columns (gemm_plan.h picks it;
// m128n168 for K-major B in bfloat16 / float16 only).
enum class WgmmaTile {
  m128n256,
  m128n192,
  m128n168,
  m128n128,
  m128n64,
  m64n256,
  m64n192,
  m64n128,
  m64n64
};

// out[m, n] = act(sum_k A[m, k] * B[k, n] + bias[n]), rounded to `dtype`.
// A[m, k] lives at a[m * a_stride_m + k] (unit k-stride).
// B comes in one of the two layouts of the ops, both read natively:
//   b_k_major (linear's weight W [N, K]): B[k, n] at b[n * b_stride + k];
//   otherwise (gemm's b [K, N], row-major): B[k, n] at b[k * b_stride + n].
// bias is [N] contiguous in `dtype`, or nullptr; out is [M, N] contiguous.
// M, N, K >= 1; every launcher handles every tail inside its kernels.
struct HalfGemmArgs {
  const void* a;
  int64_t a_stride_m;
  const void* b;
  int64_t b_stride;
  bool b_k_major;
  const void* bias;
  void* out;
  int64_t M, N, K;
  Activation act;
  HalfType dtype;
  int splits = 1;  // wgmma_split only: K splits (gemm_plan.h's wgmma_split_count)
  WgmmaTile tile = WgmmaTile::m128n256;  // wgmma and wgmma_streamk
  // wgmma_streamk only: gemm_plan.h's stream_k_workspace(...).bytes of device
  // memory, its flag_bytes zeroed on `stream` before the launch.
  void* workspace = nullptr;
};

// Hopper (sm_90a): TMA loads into swizzled shared memory, an mbarrier
// pipeline, wgmma, producer and consumer warpgroups, a persistent grid.
// Requires what TMA requires: a, b 16-byte aligned and a_stride_m, b_stride
// multiples of 16 bytes (wgmma_operands_ok); gemm_cuda.cu re-lays operands
// that break it into an aligned scratch copy first. tf32 (float32) also
// requires b_k_major.
bool wgmma_operands_ok(const HalfGemmArgs& p);
void launch_gemm_wgmma(const HalfGemmArgs& p, cudaStream_t stream);
// launch_gemm_wgmma's narrower tiles (wgmma_tiles_128.cu, wgmma_tiles_64.cu,
// wgmma_tiles_192.cu, wgmma_tiles_168.cu). 128 x 168 runs K-major B in
// bfloat16 / float16 only; given another call it runs 128 x 192.
void launch_gemm_wgmma_128x192(const HalfGemmArgs& p, cudaStream_t stream);
void launch_gemm_wgmma_128x168(const HalfGemmArgs& p, cudaStream_t stream);
void launch_gemm_wgmma_64x192(const HalfGemmArgs& p, cudaStream_t stream);
void launch_gemm_wgmma_128x128(const HalfGemmArgs& p, cudaStream_t stream);
void launch_gemm_wgmma_128x64(const HalfGemmArgs& p, cudaStream_t stream);
void launch_gemm_wgmma_64x256(const HalfGemmArgs& p, cudaStream_t stream);
void launch_gemm_wgmma_64x128(const HalfGemmArgs& p, cudaStream_t stream);
void launch_gemm_wgmma_64x64(const HalfGemmArgs& p, cudaStream_t stream);
// Variants for the tuning harness (benchmarks/tune/wgmma_configs.cu): the
// epilogue straight from registers; two staged output boxes and 4 stages;
// 2-CTA clusters sharing B through TMA multicast. Defined only in builds with
// -DMEMOPT_WGMMA_TUNING_VARIANTS.
void launch_gemm_wgmma_register_epilogue(const HalfGemmArgs& p, cudaStream_t stream);
void launch_gemm_wgmma_tma_store_4stage(const HalfGemmArgs& p, cudaStream_t stream);
void launch_gemm_wgmma_cluster2_tma_store(const HalfGemmArgs& p, cudaStream_t stream);
void launch_gemm_wgmma_pingpong(const HalfGemmArgs& p, cudaStream_t stream);

// Hopper (sm_90a): the persistent wgmma kernel with stream-K
// (kernels/stream_k.cuh): whole waves a tile a CTA, the last one or two
// waves' tiles shared out by k-tiles and fixed up through p.workspace in a
// fixed order. p.tile: 128 x 256 or 128 x 128 (gemm_plan.h's stream_k_tile).
void launch_gemm_wgmma_streamk(const HalfGemmArgs& p, cudaStream_t stream);
void launch_gemm_wgmma_streamk_128x128(const HalfGemmArgs& p, cudaStream_t stream);

// Hopper (sm_90a): the wgmma kernel's tile and mainloop with K split over a
// thread-block cluster of p.splits CTAs, the
// partial tiles summed through distributed shared memory in a fixed order.
// For shapes with fewer output tiles than SMs. Requires wgmma_operands_ok
// and wgmma_split_shape_ok (the grid's x extent).
bool wgmma_split_shape_ok(const HalfGemmArgs& p);
void launch_gemm_wgmma_split(const HalfGemmArgs& p, cudaStream_t stream);

// Hopper (sm_90a), decode shapes (M <= 64; correct for any M with
// splitk_shape_ok): the weights as wgmma's A side, the tokens as its narrow N
// side, TMA, split-K over a thread-block cluster reduced through distributed
// shared memory. Requires wgmma_operands_ok.
bool splitk_shape_ok(const HalfGemmArgs& p);
void launch_gemm_splitk(const HalfGemmArgs& p, cudaStream_t stream);
// For the tuning harness only (-DMEMOPT_WGMMA_TUNING_VARIANTS): explicit
// splits (0: the launcher's rule) and a (stages, k-boxes) config (the
// definition lists them).
void launch_gemm_splitk_tuned(const HalfGemmArgs& p, int splits, int config, cudaStream_t stream);

// Copies rows x cols 2-byte elements (unit inner stride, rows src_stride
// apart) into dst, rows dst_stride apart (a multiple of 8; dst 16-byte
// aligned), zero-filling each row up to the next multiple of 8: the aligned
// scratch the wgmma rung reads when an operand's rows break TMA's rule.
void launch_pad_rows(const void* src, int64_t src_stride, void* dst, int64_t dst_stride,
                     int64_t rows, int64_t cols, cudaStream_t stream);

// Writes the transpose of float32 src [rows, cols] (unit column stride, rows
// src_stride apart) into dst [cols, rows], contiguous (transpose_fp32.cu).
void launch_transpose_fp32(const float* src, int64_t src_stride, float* dst, int64_t rows,
                           int64_t cols, cudaStream_t stream);

// Skinny M (decode shapes, M <= 64 is what it is tuned for; correct for any
// M): the weights streamed once, tensor cores with swapped operands, split-K.
void launch_gemm_gemv(const HalfGemmArgs& p, cudaStream_t stream);

// sm_80+: mma.sync with ldmatrix and a cp.async pipeline, the portable
// tensor-core rung for GPUs without wgmma.
void launch_gemm_mma(const HalfGemmArgs& p, cudaStream_t stream);

}  // namespace memopt
