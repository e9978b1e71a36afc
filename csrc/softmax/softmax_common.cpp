#include "softmax/softmax_common.h"

#include <ATen/ops/empty.h>

#include <atomic>
#include <utility>

#include "common/rows_bound.h"
#include "common/strided_rows.h"

namespace memopt {
namespace {

std::atomic<int> g_staged_cluster{0};
RowsBound g_softmax_few_rows{kSoftmaxFewRows16, kSoftmaxFewRows32};

}  // namespace

int staged_cluster_override() { return g_staged_cluster.load(std::memory_order_relaxed); }

void set_staged_cluster_override(int cluster) {
  g_staged_cluster.store(cluster, std::memory_order_relaxed);
}

int64_t softmax_few_rows(int64_t element_size) { return g_softmax_few_rows(element_size); }
int64_t swap_softmax_few_rows(int64_t rows) { return g_softmax_few_rows.swap_override(rows); }

SoftmaxRows prepare_softmax_rows(const at::Tensor& input, int64_t dim,
                                 std::optional<c10::ScalarType> dtype) {
  SoftmaxRows rows;
  const c10::ScalarType out_dtype = dtype.value_or(input.scalar_type());
  rows.widen_to_fp32 = out_dtype == at::kFloat && input.scalar_type() != at::kFloat;
  const bool cast_first = out_dtype != input.scalar_type() && !rows.widen_to_fp32;
  const at::Tensor source = cast_first ? input.to(out_dtype) : input;
  rows.out = at::empty(input.sizes(), input.options().dtype(out_dtype).memory_format(
                                          c10::MemoryFormat::Contiguous));
  if (input.dim() > 0) {
    for (int64_t d = 0; d < dim; ++d) rows.outer *= input.size(d);
    rows.dim_size = input.size(dim);
    for (int64_t d = dim + 1; d < input.dim(); ++d) rows.inner *= input.size(d);
  }
  if (rows.inner == 1 && input.dim() > 0) {
    StridedRows flat = strided_rows(source, rows.outer, rows.dim_size);
    rows.input = std::move(flat.data);
    rows.in_stride = flat.stride;
  } else {
    rows.input = source.contiguous();
    rows.in_stride = rows.dim_size * rows.inner;
  }
  return rows;
}

}  // namespace memopt
