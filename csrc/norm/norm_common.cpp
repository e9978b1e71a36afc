#include "norm/norm_common.h"

#include <ATen/ops/empty.h>

#include <atomic>
#include <limits>
#include <utility>

#include "common/rows_bound.h"
#include "common/strided_rows.h"

namespace memopt {

NormRows prepare_norm_rows(const at::Tensor& input, int64_t row_length,
                           const std::optional<at::Tensor>& weight,
                           const std::optional<at::Tensor>& bias, std::optional<double> eps) {
  NormRows rows;
  rows.row_length = row_length;
  rows.eps = static_cast<float>(eps.value_or(std::numeric_limits<float>::epsilon()));
  rows.out = at::empty(input.sizes(), input.options().memory_format(c10::MemoryFormat::Contiguous));
  rows.rows = rows.row_length == 0 ? 0 : input.numel() / rows.row_length;
  StridedRows flat = strided_rows(input, rows.rows, rows.row_length);
  rows.input = std::move(flat.data);
  rows.in_stride = flat.stride;
  const bool has_weight = weight.has_value() && weight->defined();
  const bool has_bias = bias.has_value() && bias->defined();
  rows.fp32_params = (has_weight && weight->scalar_type() == at::kFloat) ||
                     (has_bias && bias->scalar_type() == at::kFloat);
  const at::ScalarType param_dtype = rows.fp32_params ? at::kFloat : input.scalar_type();
  if (has_weight) rows.weight = weight->to(param_dtype).contiguous();
  if (has_bias) rows.bias = bias->to(param_dtype).contiguous();
  return rows;
}

namespace {
std::atomic<NormPeel> g_norm_peel{NormPeel::kRule};
// On: 0.5-1.3 us off rms_norm's 6.7 at 1-64 rows of 4096 bf16 (H200,
// benchmarks/tune/norm_latency_probe.py; the launcher's rule keeps it to half
// a wave).
std::atomic<NormParamFetch> g_norm_param_stage{NormParamFetch::kEarly};
RowsBound g_norm_few_rows{kNormFewRows16, kNormFewRows32};
RowsBound g_norm_whole_rows{kNormWholeRows16, kNormWholeRows32};
}  // namespace

NormPeel norm_peel() { return g_norm_peel.load(std::memory_order_relaxed); }
void set_norm_peel(NormPeel mode) { g_norm_peel.store(mode); }
NormParamFetch norm_param_stage() { return g_norm_param_stage.load(std::memory_order_relaxed); }
void set_norm_param_stage(NormParamFetch mode) { g_norm_param_stage.store(mode); }
int64_t norm_few_rows(int64_t element_size) { return g_norm_few_rows(element_size); }
int64_t swap_norm_few_rows(int64_t rows) { return g_norm_few_rows.swap_override(rows); }
int64_t norm_whole_rows(int64_t element_size) { return g_norm_whole_rows(element_size); }
int64_t swap_norm_whole_rows(int64_t rows) { return g_norm_whole_rows.swap_override(rows); }

}  // namespace memopt
