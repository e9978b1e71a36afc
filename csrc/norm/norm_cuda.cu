// CUDA launchers of memopt::layer_norm and memopt::rms_norm: check -> pick the
// rung -> lay out rows -> launch on the current stream under a device guard ->
// check the launch. Rungs live one per file in kernels/.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <ATen/ops/add.h>
#include <ATen/ops/empty_like.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "common/cluster_launch.cuh"
#include "common/cuda_launch.cuh"
#include "common/checks.h"
#include "common/dispatch.h"
#include "common/kernel_registry.h"
#include "common/variants.h"
#include "norm/kernels/v01_naive.cuh"
#include "norm/kernels/v02_warp_per_row.cuh"
#include "norm/kernels/v03_block_smem.cuh"
#include "norm/kernels/v04_vectorized.cuh"
#include "norm/norm_common.h"
#include "norm/norm_narrow_packs.h"
#include "norm/norm_vectorized_launch.cuh"

namespace memopt {
namespace {

// The ladder, in order (kernels/v0N_*.cuh).
std::vector<Variant> norm_rungs() {
  return {{"naive"}, {"warp_per_row"}, {"block_smem"}, {"vectorized"}, {"cluster", hopper_only}};
}
const VariantTable kLayerNormCudaVariants("layer_norm", c10::DeviceType::CUDA, norm_rungs());
const VariantTable kRmsNormCudaVariants("rms_norm", c10::DeviceType::CUDA, norm_rungs());
// The fused add + norm ops: one rung (the vectorized kernel with kAdd).
const VariantTable kAddLayerNormCudaVariants("add_layer_norm", c10::DeviceType::CUDA, {{"fused"}});
const VariantTable kAddRmsNormCudaVariants("add_rms_norm", c10::DeviceType::CUDA, {{"fused"}});

// block_smem caches up to this much of a row: dynamic plus static
// shared memory must stay within the 48 KB a block gets without an opt-in
// (48 KB of cache alone made the launch fail with "invalid argument").
constexpr int64_t kBlockSmemCacheBytes = 44 * 1024;

// The vectorized rung's 16-byte packs: whole packs a row, aligned rows and
// parameters, fewer than 2^30 packs a row (norm_vectorized_launch.cuh).
bool vector_ready(const NormRows& p) { return packs_fit(p, 16); }
// The cluster rung: 8 CTAs of 512 threads a row, one row a cluster (grid y).
constexpr int kNormCluster = 8;
constexpr int kNormClusterThreads = 512;
// Row elements vectorized keeps in registers at most: 1024 threads x 32 (8
// fp32 packs or 4 16-bit ones).
constexpr int64_t kVectorizedCapacity = 1024 * kNormThreadElems;

// Whether the cluster rung can take p: pack-ready rows, at most 65535 of them.
bool cluster_ready(const NormRows& p) { return vector_ready(p) && p.rows <= 65535; }

// What vectorized and cluster fall back to where no pack reads the rows (an
// odd pointer): block_smem for wide rows (a block a row), warp_per_row for
// narrow ones.
std::string rowwise_rung(const NormRows& p) {
  return p.row_length > 1024 ? "block_smem" : "warp_per_row";
}

// auto: vectorized where its 16-byte packs fit the row, or on Hopper cluster
// for rows wider than vectorized keeps in registers; vectorized with narrower
// packs where they do not (norm_narrow_packs.cu: at 16384 x 2050 bf16,
// block_smem read 34% of copy); rowwise_rung where no pack fits. Variants
// "vectorized" and "cluster" on rows they cannot read run that same
// fallback, and "cluster" on a row one block holds runs vectorized: split
// over 8 CTAs it would pay three cluster barriers for a pack or two a thread
// (1-5% of copy at 768-4096 columns).
std::string auto_rung(const NormRows& p, Capability cap = 0) {
  if (vector_ready(p)) {
    return hopper_only(cap) && p.row_length > kVectorizedCapacity && cluster_ready(p)
               ? "cluster"
               : "vectorized";
  }
  return packs_fit(p, p.input.element_size()) ? "vectorized" : rowwise_rung(p);
}

template <typename scalar_t, typename param_t, bool kRms>
void launch_cluster(const NormRows& p, cudaStream_t stream) {
  const scalar_t* none = nullptr;
  ClusterLaunch cluster(dim3(kNormCluster, static_cast<unsigned>(p.rows)),
                        dim3(kNormClusterThreads), dim3(kNormCluster), stream);
  C10_CUDA_CHECK(cluster.launch(
      norm_vectorized_kernel<scalar_t, param_t, kRms, kNormClusterThreads, false, kNormCluster,
                             kPacksHolding<scalar_t, kNormThreadElems>>,
      p.input.const_data_ptr<scalar_t>(),
      p.weight.defined() ? p.weight.const_data_ptr<param_t>() : nullptr,
      p.bias.defined() ? p.bias.const_data_ptr<param_t>() : nullptr,
      p.out.mutable_data_ptr<scalar_t>(), p.rows, p.row_length, p.in_stride, p.eps, none,
      static_cast<scalar_t*>(nullptr), /*stage_elems=*/0, /*prefetch_elems=*/0));
}

template <bool kRms>
void launch_norm(const std::string& rung, const NormRows& p) {
  if (p.out.numel() == 0) return;
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  if ((rung == "vectorized" || rung == "cluster") && !vector_ready(p)) {
    // Rows the 16-byte packs cannot read (a width that is not a whole number
    // of packs, misaligned data): the same kernel with the widest of 8-, 4-
    // and 2-byte packs that fits (norm_narrow_packs.cu); rows no pack reads
    // (an odd pointer): rowwise_rung.
    if (launch_norm_narrow_packs<kRms>(p, stream)) {
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    } else {
      launch_norm<kRms>(rowwise_rung(p), p);
    }
    return;
  }
  if (rung == "cluster" && !(p.row_length <= kVectorizedCapacity || cluster_ready(p))) {
    // Packed rows past 65535 a cluster grid holds: vectorized re-reads them.
    launch_norm<kRms>("vectorized", p);
    return;
  }
  MEMOPT_DISPATCH_FLOAT_TYPES(p.input.scalar_type(), "memopt_norm", [&] {
    const auto launch = [&](auto param_zero) {
      using param_t = decltype(param_zero);
      const scalar_t* x = p.input.const_data_ptr<scalar_t>();
      const param_t* w = p.weight.defined() ? p.weight.const_data_ptr<param_t>() : nullptr;
      const param_t* b = p.bias.defined() ? p.bias.const_data_ptr<param_t>() : nullptr;
      scalar_t* y = p.out.mutable_data_ptr<scalar_t>();
      if (rung == "warp_per_row") {
        const auto blocks = static_cast<unsigned>(ceil_div<int64_t>(p.rows, kNormWarpRowsPerBlock));
        norm_warp_per_row_kernel<scalar_t, param_t, kRms>
            <<<blocks, 32 * kNormWarpRowsPerBlock, 0, stream>>>(x, w, b, y, p.rows, p.row_length,
                                                                p.in_stride, p.eps);
      } else if (rung == "block_smem") {
        const int64_t cached = std::min<int64_t>(
            p.row_length, kBlockSmemCacheBytes / static_cast<int64_t>(sizeof(scalar_t)));
        norm_block_smem_kernel<scalar_t, param_t, kRms>
            <<<static_cast<unsigned>(p.rows), kNormBlockThreads,
               static_cast<size_t>(cached) * sizeof(scalar_t), stream>>>(
                x, w, b, y, p.row_length, p.in_stride, cached, p.eps);
      } else if (rung == "vectorized" ||
                 (rung == "cluster" && p.row_length <= kVectorizedCapacity)) {
        // (cluster on a row one block holds: vectorized, auto_rung says why)
        launch_vectorized_sized<scalar_t, param_t, kRms>(p, stream);
      } else if (rung == "cluster") {
        launch_cluster<scalar_t, param_t, kRms>(p, stream);
      } else {
        const unsigned blocks = static_cast<unsigned>(ceil_div<int64_t>(p.rows, kNormNaiveThreads));
        norm_naive_kernel<scalar_t, param_t, kRms><<<blocks, kNormNaiveThreads, 0, stream>>>(
            x, w, b, y, p.rows, p.row_length, p.in_stride, p.eps);
      }
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    };
    if (p.fp32_params) {
      launch(float{});
    } else {
      launch(scalar_t{});
    }
  });
}

at::Tensor layer_norm_cuda(const at::Tensor& input, c10::SymIntArrayRef normalized_shape,
                           const std::optional<at::Tensor>& weight,
                           const std::optional<at::Tensor>& bias, double eps,
                           c10::string_view variant) {
  const int64_t row_length =
      check_norm_inputs("layer_norm", input, normalized_shape, weight, bias);
  const c10::cuda::CUDAGuard device_guard(input.device());
  const NormRows p = prepare_norm_rows(input, row_length, weight, bias, eps);
  launch_norm</*kRms=*/false>(
      kLayerNormCudaVariants.select(variant, capability_of(input), auto_rung(p, capability_of(input))), p);
  return p.out;
}

at::Tensor rms_norm_cuda(const at::Tensor& input, c10::SymIntArrayRef normalized_shape,
                         const std::optional<at::Tensor>& weight, std::optional<double> eps,
                         c10::string_view variant) {
  const int64_t row_length =
      check_norm_inputs("rms_norm", input, normalized_shape, weight, std::nullopt);
  const c10::cuda::CUDAGuard device_guard(input.device());
  const NormRows p = prepare_norm_rows(input, row_length, weight, std::nullopt, eps);
  launch_norm</*kRms=*/true>(
      kRmsNormCudaVariants.select(variant, capability_of(input), auto_rung(p, capability_of(input))), p);
  return p.out;
}

// add_layer_norm / add_rms_norm: the fused vectorized kernel where its 16-byte
// packs read the rows (and residual and sum are 16-byte aligned too), or its
// 8- or 4-byte packs (norm_narrow_packs.cu: N = 2050 or 4100 in bf16, at
// 16384 x 2050 the two passes below ran 0.65x torch.compile); otherwise the
// sum first, then the norm auto picks for it (two passes, same results).
template <bool kRms>
std::tuple<at::Tensor, at::Tensor> add_norm(const at::Tensor& input, const at::Tensor& residual,
                                            int64_t row_length,
                                            const std::optional<at::Tensor>& weight,
                                            const std::optional<at::Tensor>& bias,
                                            std::optional<double> eps) {
  const c10::cuda::CUDAGuard device_guard(input.device());
  const NormRows p = prepare_norm_rows(input, row_length, weight, bias, eps);
  const at::Tensor res = residual.contiguous();
  at::Tensor sum = at::empty_like(p.out);
  if (p.out.numel() == 0) return {p.out, sum};
  if (packs_fit(p, 16, res, sum)) {
    const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    MEMOPT_DISPATCH_FLOAT_TYPES(p.input.scalar_type(), "memopt_add_norm", [&] {
      if (p.fp32_params) {
        launch_vectorized_sized<scalar_t, float, kRms, true>(p, stream, res, sum);
      } else {
        launch_vectorized_sized<scalar_t, scalar_t, kRms, true>(p, stream, res, sum);
      }
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    });
    return {p.out, sum};
  }
  if (launch_norm_narrow_packs<kRms>(p, at::cuda::getCurrentCUDAStream(), res, sum)) {
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return {p.out, sum};
  }
  // Into the contiguous sum: at::add would follow a transposed input's strides,
  // and every output of the op is contiguous (the fuzzer found it).
  at::add_out(sum, input, res);
  const NormRows q = prepare_norm_rows(sum, row_length, weight, bias, eps);
  launch_norm<kRms>(auto_rung(q), q);
  return {q.out, sum};
}

std::tuple<at::Tensor, at::Tensor> add_layer_norm_cuda(
    const at::Tensor& input, const at::Tensor& residual, c10::SymIntArrayRef normalized_shape,
    const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias, double eps,
    c10::string_view variant) {
  const int64_t row_length =
      check_add_norm_inputs("add_layer_norm", input, residual, normalized_shape, weight, bias);
  kAddLayerNormCudaVariants.select(variant, capability_of(input), "fused");
  return add_norm</*kRms=*/false>(input, residual, row_length, weight, bias, eps);
}

std::tuple<at::Tensor, at::Tensor> add_rms_norm_cuda(const at::Tensor& input,
                                                     const at::Tensor& residual,
                                                     c10::SymIntArrayRef normalized_shape,
                                                     const std::optional<at::Tensor>& weight,
                                                     std::optional<double> eps,
                                                     c10::string_view variant) {
  const int64_t row_length = check_add_norm_inputs("add_rms_norm", input, residual,
                                                   normalized_shape, weight, std::nullopt);
  kAddRmsNormCudaVariants.select(variant, capability_of(input), "fused");
  return add_norm</*kRms=*/true>(input, residual, row_length, weight, std::nullopt, eps);
}

}  // namespace

TORCH_LIBRARY_IMPL(memopt, CUDA, m) {
  m.impl("layer_norm", &layer_norm_cuda);
  m.impl("rms_norm", &rms_norm_cuda);
  m.impl("add_layer_norm", &add_layer_norm_cuda);
  m.impl("add_rms_norm", &add_rms_norm_cuda);
}

// kernel_info (common/kernel_registry.h): what each rung runs on the norm
// benchmarks' rows (the norms and add-norm suites: float32 and
// bfloat16, weights in the input's dtype, 768-12288 columns). vectorized and
// fused at the threads a row those widths take: bfloat16 32 (768-1024
// columns), 128 (4096), 256 (8192), 512 (12288), 1024 past 16384; float32 64,
// 256, 512, and 8 packs a thread past 8192 columns (512: 12288; 1024: past
// 16384).
namespace {

template <bool kRms>
std::vector<KernelEntry> norm_kernels(const char* op) {
  using bf16 = at::BFloat16;
  constexpr int k4 = kRowVecs, k8 = kWideRowVecs;
  return {
      {op, "naive", "float32", kernel_address(norm_naive_kernel<float, float, kRms>)},
      {op, "naive", "bfloat16", kernel_address(norm_naive_kernel<bf16, bf16, kRms>)},
      {op, "warp_per_row", "float32", kernel_address(norm_warp_per_row_kernel<float, float, kRms>)},
      {op, "warp_per_row", "bfloat16", kernel_address(norm_warp_per_row_kernel<bf16, bf16, kRms>)},
      {op, "block_smem", "float32", kernel_address(norm_block_smem_kernel<float, float, kRms>)},
      {op, "block_smem", "bfloat16", kernel_address(norm_block_smem_kernel<bf16, bf16, kRms>)},
      {op, "vectorized", "float32, 64 threads a row, 4 packs a thread",
       kernel_address(norm_vectorized_kernel<float, float, kRms, 64, false, 1, k4>)},
      {op, "vectorized", "float32, 256 threads a row, 4 packs a thread",
       kernel_address(norm_vectorized_kernel<float, float, kRms, 256, false, 1, k4>)},
      {op, "vectorized", "float32, 512 threads a row, 4 packs a thread",
       kernel_address(norm_vectorized_kernel<float, float, kRms, 512, false, 1, k4>)},
      {op, "vectorized", "float32, 512 threads a row, 8 packs a thread",
       kernel_address(norm_vectorized_kernel<float, float, kRms, 512, false, 1, k8>)},
      {op, "vectorized", "float32, 1024 threads a row, 8 packs a thread",
       kernel_address(norm_vectorized_kernel<float, float, kRms, 1024, false, 1, k8>)},
      {op, "vectorized", "bfloat16, 32 threads a row, 4 packs a thread",
       kernel_address(norm_vectorized_kernel<bf16, bf16, kRms, 32, false, 1, k4>)},
      {op, "vectorized", "bfloat16, 128 threads a row, 4 packs a thread",
       kernel_address(norm_vectorized_kernel<bf16, bf16, kRms, 128, false, 1, k4>)},
      {op, "vectorized", "bfloat16, 256 threads a row, 4 packs a thread",
       kernel_address(norm_vectorized_kernel<bf16, bf16, kRms, 256, false, 1, k4>)},
      {op, "vectorized", "bfloat16, 512 threads a row, 4 packs a thread",
       kernel_address(norm_vectorized_kernel<bf16, bf16, kRms, 512, false, 1, k4>)},
      {op, "vectorized", "bfloat16, 1024 threads a row, 4 packs a thread",
       kernel_address(norm_vectorized_kernel<bf16, bf16, kRms, 1024, false, 1, k4>)},
      {op, "cluster", "float32, 8 CTAs of 512 threads a row",
       kernel_address(norm_vectorized_kernel<float, float, kRms, kNormClusterThreads, false,
                                             kNormCluster, kPacksHolding<float, kNormThreadElems>>)},
      {op, "cluster", "bfloat16, 8 CTAs of 512 threads a row",
       kernel_address(norm_vectorized_kernel<bf16, bf16, kRms, kNormClusterThreads, false,
                                             kNormCluster, kPacksHolding<bf16, kNormThreadElems>>)},
  };
}

template <bool kRms>
std::vector<KernelEntry> add_norm_kernels(const char* op) {
  using bf16 = at::BFloat16;
  return {
      {op, "fused", "float32, 64 threads a row",
       kernel_address(norm_vectorized_kernel<float, float, kRms, 64, true>)},
      {op, "fused", "float32, 256 threads a row",
       kernel_address(norm_vectorized_kernel<float, float, kRms, 256, true>)},
      {op, "fused", "float32, 512 threads a row",
       kernel_address(norm_vectorized_kernel<float, float, kRms, 512, true>)},
      {op, "fused", "bfloat16, 32 threads a row",
       kernel_address(norm_vectorized_kernel<bf16, bf16, kRms, 32, true>)},
      {op, "fused", "bfloat16, 128 threads a row",
       kernel_address(norm_vectorized_kernel<bf16, bf16, kRms, 128, true>)},
      {op, "fused", "bfloat16, 256 threads a row",
       kernel_address(norm_vectorized_kernel<bf16, bf16, kRms, 256, true>)},
  };
}

MEMOPT_REGISTER_KERNELS(kLayerNormKernels, norm_kernels<false>("layer_norm"));
MEMOPT_REGISTER_KERNELS(kRmsNormKernels, norm_kernels<true>("rms_norm"));
MEMOPT_REGISTER_KERNELS(kAddLayerNormKernels, add_norm_kernels<false>("add_layer_norm"));
MEMOPT_REGISTER_KERNELS(kAddRmsNormKernels, add_norm_kernels<true>("add_rms_norm"));

}  // namespace

}  // namespace memopt
