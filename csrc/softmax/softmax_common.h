// What softmax needs on every device after its inputs are checked: the input
// seen as [outer, dim_size, inner] (softmax runs along dim_size, elements of one
// softmax row are `inner` apart), and an output of the requested dtype.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>

namespace memopt {

struct SoftmaxRows {
  // dtype float32/16/bf16. Over the last dim: [outer, dim_size] with unit
  // inner stride, rows in_stride elements apart (a view of the caller's input
  // whenever its rows are evenly spaced, else a contiguous copy); over an
  // inner dim: contiguous, in_stride = dim_size * inner.
  at::Tensor input;
  int64_t in_stride = 0;
  at::Tensor out;    // contiguous, input's shape; dtype = `dtype` or the input's
  int64_t outer = 1;
  int64_t dim_size = 1;
  int64_t inner = 1;
  bool widen_to_fp32 = false;  // input float16/bfloat16 read directly into a float32 output
};

// `dim` already wrapped by check_softmax_inputs. With `dtype` given, the result
// is torch.softmax's: the input cast to dtype, then softmax. A float16/bfloat16
// input asked for float32 needs no cast (the kernel reads it and computes in
// fp32 anyway); every other change of dtype casts the input first.
SoftmaxRows prepare_softmax_rows(const at::Tensor& input, int64_t dim,
                                 std::optional<c10::ScalarType> dtype);

// The CTAs a row of the staged rung takes (softmax_staged.h's
// staged_cluster): 0, the rule; 1 or 2, that many wherever their buffers
// fit (torch_memopt._C._set_softmax_staged_cluster, for the tests and
// the sweep). Here, not beside the rung, so that a build without CUDA links it.
int staged_cluster_override();
void set_staged_cluster_override(int cluster);

// The most rows a grid may have for online's 16-byte-pack rows of 33-512
// packs to run one pack a thread (softmax_launch.cuh's launch_online_few_rows
// says why): kSoftmaxFewRows16 for 16-bit input, kSoftmaxFewRows32 for fp32,
// unless the tuning switch set one bound for both (swap_softmax_few_rows(rows),
// 0 turning the path off; -1 restores the rule). For the sweep and the tests
// (torch_memopt._C._set_softmax_few_rows). Timed both ways on one build
// (H100, benchmarks/tune/norm_few_rows_sweep.py --ops softmax, 1000 and 2048
// columns): bf16 gains 1-3% at 1-128 rows and breaks even at 512, but loses
// 13-15% at 2048; fp32 gains nothing at 1-128 rows (0.98-1.01x) and loses
// 19% at 512, so its rule keeps four packs a thread.
constexpr int64_t kSoftmaxFewRows16 = 512;
constexpr int64_t kSoftmaxFewRows32 = 0;
int64_t softmax_few_rows(int64_t element_size);
int64_t swap_softmax_few_rows(int64_t rows);  // returns the previous override

}  // namespace memopt
