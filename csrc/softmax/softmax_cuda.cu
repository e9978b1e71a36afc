// CUDA launcher of memopt::softmax: check -> pick the rung -> lay out rows ->
// launch on the current stream under a device guard -> check the launch.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <string>

#include "common/checks.h"
#include "common/cuda_launch.cuh"
#include "common/device_info.h"
#include "common/dispatch.h"
#include "common/kernel_registry.h"
#include "common/variants.h"
#include "softmax/kernels/v01_naive.cuh"
#include "softmax/kernels/v02_warp_per_row.cuh"
#include "softmax/kernels/v03_block_smem.cuh"
#include "softmax/kernels/v04_online.cuh"
#include "softmax/kernels/v05_cluster.cuh"
#include "softmax/softmax_common.h"
#include "softmax/softmax_launch.cuh"
#include "softmax/softmax_narrow.h"
#include "softmax/softmax_staged.h"

namespace memopt {
namespace {

const VariantTable kSoftmaxCudaVariants("softmax", c10::DeviceType::CUDA,
                                         {{"naive"},
                                          {"warp_per_row"},
                                          {"block_smem"},
                                          {"online"},
                                          {"cluster", hopper_only},
                                          {"staged", ampere_or_newer}});

// block_smem caches up to this much of a row: dynamic plus static
// shared memory must stay within the 48 KB a block gets without an opt-in
// (48 KB of cache alone made the launch fail with "invalid argument").
constexpr int64_t kSoftmaxSmemCacheBytes = 44 * 1024;

bool aligned_to(const at::Tensor& t, int64_t bytes) {
  return reinterpret_cast<uintptr_t>(t.const_data_ptr()) % bytes == 0;
}

// online's packs: 16 bytes of input, as many elements of output.
bool online_ready(const SoftmaxRows& p) {
  const int64_t vec = 16 / static_cast<int64_t>(p.input.element_size());
  return p.inner == 1 && p.dim_size % vec == 0 && p.in_stride % vec == 0 &&
         aligned_to(p.input, 16) &&
         aligned_to(p.out, vec * static_cast<int64_t>(p.out.element_size()));
}

// softmax_narrow.cu's one-element packs: rows along the last dim whose input
// and output are aligned to their elements (every tensor torch allocates).
bool narrow_ready(const SoftmaxRows& p) {
  return p.inner == 1 && aligned_to(p.input, p.input.element_size()) &&
         aligned_to(p.out, p.out.element_size());
}

// Row elements online keeps in registers at most: 1024 threads x 32 (8 fp32
// packs or 4 16-bit ones).
constexpr int64_t kOnlineCapacity = 1024 * kSoftmaxThreadElems;

// online with each row's ends peeled off (softmax_peeled.cu): every row of x
// and of y must start at the same offset in its 16-byte packs of x (in
// elements), which holds for contiguous rows whose x and y pointers do.
bool peel_ready(const SoftmaxRows& p) {
  const int64_t in_size = p.input.element_size(), out_size = p.out.element_size();
  const int64_t vec = 16 / in_size;
  const auto x = reinterpret_cast<uintptr_t>(p.input.const_data_ptr());
  const auto y = reinterpret_cast<uintptr_t>(p.out.const_data_ptr());
  const auto x_offset = static_cast<int64_t>(x / in_size) % vec;
  const auto y_offset = static_cast<int64_t>(y / out_size) % vec;
  return narrow_ready(p) && x_offset == y_offset &&
         (p.outer == 1 || (p.in_stride - p.dim_size) % vec == 0);
}

// Few wide rows: online's one block a row would leave most SMs idle (8 x
// 50257 bf16: 8 blocks, 0.30x eager), so each row goes over a cluster of 8
// CTAs instead: 8 x 8 = 64 CTAs there, 9.9 us against eager's 18.1 (H200).
// Wide: at least 8192 columns, 1024 a CTA of the cluster. Few: rows whose
// CTAs each get an SM of their own (at 64 x 32000 the clusters' 512 CTAs took
// 19.7 us, online 9.6); for rows only one-element packs read past online's
// registers, whose other choice is block_smem, up to four CTAs an SM (64 x
// 50257 before the peeled kernel: 26.1 us against block_smem's 63.4; at 512
// rows 138 against 114).
bool few_wide_rows(const SoftmaxRows& p, Capability cap, bool packed) {
  if (!hopper_only(cap) || p.inner != 1 || p.dim_size < 8192) return false;
  const int per_sm = packed || p.dim_size <= kOnlineCapacity ? 1 : 4;
  return p.outer * kSoftmaxCluster <= static_cast<int64_t>(per_sm) * sm_count();
}

// 16-bit rows online holds in blocks of 512 threads (8 packs a thread).
constexpr int64_t kOnline512Elems = 512 * kWideRowVecs * 8;

// Whether auto sends few wide rows over a cluster (few_wide_rows), except the
// 16-bit rows that online's 16-byte packs (peeled or not) hold in 512-thread
// blocks: there online's block a row was 3-10% faster at 1-8 rows and equal
// at 64 (H100, 2026-12-06 night, us, cluster -> online: bf16 1 / 8 x 32000
// 8.93 / 9.18 -> 8.64 / 8.90, x 32001 10.1 / 10.4 -> 9.30 / 9.38), where
// fp32 at 32000 still gains 19% from the cluster (10.8 -> 8.77) and bf16 at
// 50257 (1024 threads a row) 21% (13.1 -> 10.3;
// benchmarks/results/tune/norm-grid_softmax_few_rows_32000_h100.json). Rows
// only one-element packs read are not measured: they keep the cluster.
bool cluster_beats_online(const SoftmaxRows& p, Capability cap, bool packed) {
  return few_wide_rows(p, cap, packed) &&
         !(packed && p.input.element_size() == 2 && p.dim_size <= kOnline512Elems);
}

// staged (v06_staged.cuh) rather than online for many 16-bit rows that
// online holds only with 1024 threads, one block an SM (past 32768 columns),
// whose two buffers fit one block's shared memory: 512 / 2048 x 50257 bf16
// took 51.3 / 161.9 us against online's 55.0 / 174.1 (H100, 2026-12-06). At
// 32000 / 32001 columns, where online's 512-thread blocks run two an SM,
// staged was 13-23% slower, and at 64 rows (a block a row, nothing to
// prefetch) 5%. And over a cluster of 2 CTAs for fp32 rows past online's
// registers, rather than the peeled online that re-reads the rest of the row
// (or cluster's 8 CTAs where the row is whole packs): 512 / 2048 x 50257 fp32
// in 91.3 / 325.9 us against 101.5 / 372.3 (H100, 2026-12-06 evening; at 64
// and 132 rows 1.03-1.06x and 1.00x, so the rule starts at a row an SM).
// staged_ctas: the CTAs a row of staged takes (staged_cluster: the fewest
// whose buffers fit), 0 where none fit or the one-element reads' alignment
// fails (narrow_ready: the kernel peels any row start itself).
int staged_ctas(const SoftmaxRows& p, Capability cap) {
  return narrow_ready(p) ? staged_cluster(p, hopper_only(cap)) : 0;
}

bool staged_beats_online(const SoftmaxRows& p, Capability cap) {
  const int64_t sms = sm_count();
  if (p.input.element_size() == 2) {
    return p.dim_size > kOnline512Elems && p.outer >= 2 * sms && staged_ctas(p, cap) == 1;
  }
  return p.dim_size > kOnlineCapacity && p.outer >= sms && staged_ctas(p, cap) == 2;
}

// Many 16-bit rows past online's registers (65536 elements): cluster with
// each row over 4-8 CTAs of 512 threads (two an SM) or 8 of 1024 that hold
// it as loaded (launch_cluster_held), read once, where online re-reads the
// rest: 512 / 2048 x 128256 bf16 from 71% / 76% of copy to 83% / 90%, x
// 256000 from 62% / 68% to 85% / 89% (H100, 2026-12-06, A/Bs in one process:
// CTAs of 1024 threads gave 77-83%). Many: the CTAs fill every SM's 1024
// threads; where they do not, cluster's 8 CTAs of few_wide_rows or online run
// as before. Held over 2 CTAs of 512 from 32769 columns, peeled for widths
// off the pack, 50257 ran as staged does (68% / 82% at 512 / 2048 rows): not
// taken.
bool held_rows(const SoftmaxRows& p, Capability cap) {
  const HeldShape shape = held_shape(p.dim_size);
  return hopper_only(cap) && p.input.element_size() == 2 && online_ready(p) &&
         p.dim_size > kHeldElems && shape.ctas > 0 &&
         p.outer * shape.ctas * shape.threads >= int64_t{sm_count()} * 1024;
}

// auto, for a softmax over the last dim: cluster for few wide rows
// (few_wide_rows), but for packed 16-bit rows of up to 32768 columns
// (cluster_beats_online); staged for many 16-bit rows past 32768 columns, and fp32
// rows past online's registers that two CTAs hold (staged_beats_online);
// cluster for many 16-bit rows past online's registers (held_rows);
// online where its 16-byte packs fit the row, except
// fp32 rows wider than online's registers, which take cluster on Hopper;
// where they do not, online with each row's ends peeled off (peel_ready), at
// any width: past its registers it re-reads the rest of the row, and 64 /
// 512 / 2048 x 50257 fp32 ran 20.6 / 100.5 / 371 us so against block_smem's
// 53.4 / 175.6 / 674 (H100, 2026-12-06); or with one-element packs
// (softmax_narrow.cu: 2048 x 32001 bf16 174 us against block_smem's 184), as
// long as the row fits its registers; else block_smem for wide rows and
// warp_per_row for narrow ones. (One-element packs over a cluster read 2048
// x 50257 bf16 at 17% of copy.)
// 16-bit rows that wide (held_rows aside) stay on online, whose re-read
// comes from L2: at 131072 / 262144 bf16 columns online ran at 59% of copy
// and cluster's 8 CTAs of 512 threads at 47% / 39%, at fp32 cluster 73% / 67%
// and online 57% / 59% (H200).
// Over an inner dim (elements of a row `inner` apart) every rung after naive
// would need a transposing copy; naive's threads own neighbouring columns
// there and read coalesced, so all of them run naive.
std::string auto_rung(const SoftmaxRows& p, Capability cap) {
  if (p.inner != 1) return "naive";
  // Rows the peeled kernel reads count as packed: only one-element packs
  // past online's registers were left with block_smem.
  const bool packed = online_ready(p) || peel_ready(p);
  if ((packed || narrow_ready(p)) && cluster_beats_online(p, cap, packed)) return "cluster";
  if (ampere_or_newer(cap) && staged_beats_online(p, cap)) return "staged";
  if (held_rows(p, cap)) return "cluster";
  if (online_ready(p)) {
    return hopper_only(cap) && p.dim_size > kOnlineCapacity && p.input.element_size() == 4
               ? "cluster"
               : "online";
  }
  if (peel_ready(p)) return "online";
  if (narrow_ready(p) && p.dim_size <= kOnlineCapacity) return "online";
  return p.dim_size > 1024 ? "block_smem" : "warp_per_row";
}

void launch_softmax(std::string rung, const SoftmaxRows& p, Capability cap) {
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  // The rungs after naive read rows along the last dim; an inner dim, or
  // rows no pack of online and cluster can read, takes what auto takes. A row
  // that one block's registers hold runs online under "cluster" too, unless
  // the rows are few (few_wide_rows): split over 8 CTAs it would pay two
  // cluster barriers for a few packs a thread (at 32768 x 1000 that took 20
  // ms against online's 0.05). Rows off the 16-byte pack: online with the
  // ends peeled off where peel_ready holds (softmax_peeled.cu), otherwise
  // online and cluster with one-element packs (softmax_narrow.cu).
  if ((rung != "naive" && p.inner != 1) ||
      ((rung == "online" || rung == "cluster") && !online_ready(p) && !narrow_ready(p))) {
    rung = auto_rung(p, cap);
  }
  if (rung == "cluster" && p.dim_size <= kOnlineCapacity && !few_wide_rows(p, cap, true)) {
    rung = "online";
  }
  const int64_t rows = p.outer * p.inner;
  // staged: rows whose two buffers fit the shared memory of a block or of a
  // cluster; others run what auto runs.
  if (rung == "staged") {
    if (const int cluster = staged_ctas(p, cap)) {
      launch_softmax_staged(p, rows, cluster, stream);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
      return;
    }
    rung = auto_rung(p, cap);
  }
  if ((rung == "online" || rung == "cluster") && !online_ready(p)) {
    if (rung == "online" && peel_ready(p)) {
      launch_softmax_peeled(p, rows, stream);
    } else {
      launch_softmax_narrow(p, rows, rung == "cluster", stream);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return;
  }
  MEMOPT_DISPATCH_FLOAT_TYPES(p.input.scalar_type(), "memopt_softmax", [&] {
    const auto launch = [&](auto out_zero) {
      using out_t = decltype(out_zero);
      const scalar_t* x = p.input.const_data_ptr<scalar_t>();
      out_t* y = p.out.mutable_data_ptr<out_t>();
      if (rung == "warp_per_row") {
        const auto kernel = p.dim_size <= 32 * 8    ? softmax_warp_per_row_kernel<scalar_t, out_t, 8>
                            : p.dim_size <= 32 * 16 ? softmax_warp_per_row_kernel<scalar_t, out_t, 16>
                                                    : softmax_warp_per_row_kernel<scalar_t, out_t, 32>;
        kernel<<<static_cast<unsigned>(ceil_div<int64_t>(rows, kSoftmaxWarpRowsPerBlock)),
                 32 * kSoftmaxWarpRowsPerBlock, 0, stream>>>(x, y, rows, p.dim_size, p.in_stride);
      } else if (rung == "block_smem") {
        const int64_t cached = std::min<int64_t>(
            p.dim_size, kSoftmaxSmemCacheBytes / static_cast<int64_t>(sizeof(scalar_t)));
        softmax_block_smem_kernel<scalar_t, out_t>
            <<<static_cast<unsigned>(rows), kSoftmaxBlockThreads,
               static_cast<size_t>(cached) * sizeof(scalar_t), stream>>>(x, y, p.dim_size,
                                                                          p.in_stride, cached);
      } else if (rung == "online") {
        launch_online_sized<scalar_t, out_t>(p, rows, stream);
      } else if (rung == "cluster") {
        if constexpr (sizeof(scalar_t) == 2) {
          if (held_rows(p, cap)) return launch_cluster_held<scalar_t, out_t>(p, rows, stream);
        }
        launch_cluster<scalar_t, out_t>(p, rows, stream);
      } else {
        softmax_naive_kernel<scalar_t, out_t>
            <<<static_cast<unsigned>(ceil_div<int64_t>(rows, kSoftmaxNaiveThreads)),
               kSoftmaxNaiveThreads, 0, stream>>>(x, y, p.outer, p.dim_size, p.inner, p.in_stride);
      }
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    };
    if (p.widen_to_fp32) {
      launch(float{});
    } else {
      launch(scalar_t{});
    }
  });
}

at::Tensor softmax_cuda(const at::Tensor& input, int64_t dim,
                        std::optional<c10::ScalarType> dtype, c10::string_view variant) {
  const int64_t wrapped_dim = check_softmax_inputs(input, dim, dtype);
  const c10::cuda::CUDAGuard device_guard(input.device());
  const SoftmaxRows p = prepare_softmax_rows(input, wrapped_dim, dtype);
  const Capability cap = capability_of(input);
  const std::string rung = kSoftmaxCudaVariants.select(variant, cap, auto_rung(p, cap));
  if (p.out.numel() == 0) return p.out;
  launch_softmax(rung, p, cap);
  return p.out;
}

}  // namespace

TORCH_LIBRARY_IMPL(memopt, CUDA, m) { m.impl("softmax", &softmax_cuda); }

// kernel_info (common/kernel_registry.h): what each rung runs on the softmax
// benchmark's rows (the norms suite: float32 and bfloat16 in and
// out, 197-262144 columns). warp_per_row at its three row caches; online at
// the threads a row those widths take: bfloat16 32 (1000-1024 columns), 128
// (4096), 512 (16384), and 8 packs a thread as loaded past that (512 threads
// at 32768, 1024 wider; 1024 threads of 4 float packs at 32768 while rows <=
// SMs); float32 64, 256, and 8 packs a
// thread past 8192 columns (512 up to 16384, 1024 at 32768); cluster at 512
// threads a CTA (up to 131072 columns) and 1024 (262144).
namespace {

std::vector<KernelEntry> softmax_kernels() {
  using bf16 = at::BFloat16;
  constexpr int k4 = kRowVecs, k8 = kWideRowVecs;
  return {
      {"softmax", "naive", "float32", kernel_address(softmax_naive_kernel<float, float>)},
      {"softmax", "naive", "bfloat16", kernel_address(softmax_naive_kernel<bf16, bf16>)},
      {"softmax", "warp_per_row", "float32, rows up to 256 (8 elements a lane)",
       kernel_address(softmax_warp_per_row_kernel<float, float, 8>)},
      {"softmax", "warp_per_row", "float32, rows up to 512 (16 elements a lane)",
       kernel_address(softmax_warp_per_row_kernel<float, float, 16>)},
      {"softmax", "warp_per_row", "float32, rows over 512 (32 elements a lane)",
       kernel_address(softmax_warp_per_row_kernel<float, float, 32>)},
      {"softmax", "warp_per_row", "bfloat16, rows up to 256 (8 elements a lane)",
       kernel_address(softmax_warp_per_row_kernel<bf16, bf16, 8>)},
      {"softmax", "warp_per_row", "bfloat16, rows up to 512 (16 elements a lane)",
       kernel_address(softmax_warp_per_row_kernel<bf16, bf16, 16>)},
      {"softmax", "warp_per_row", "bfloat16, rows over 512 (32 elements a lane)",
       kernel_address(softmax_warp_per_row_kernel<bf16, bf16, 32>)},
      {"softmax", "block_smem", "float32", kernel_address(softmax_block_smem_kernel<float, float>)},
      {"softmax", "block_smem", "bfloat16", kernel_address(softmax_block_smem_kernel<bf16, bf16>)},
      {"softmax", "online", "float32, 64 threads a row, 4 packs a thread",
       kernel_address(softmax_online_kernel<float, float, 64, k4>)},
      {"softmax", "online", "float32, 256 threads a row, 4 packs a thread",
       kernel_address(softmax_online_kernel<float, float, 256, k4>)},
      {"softmax", "online", "float32, 512 threads a row, 8 packs a thread",
       kernel_address(softmax_online_kernel<float, float, 512, k8>)},
      {"softmax", "online", "float32, 1024 threads a row, 8 packs a thread",
       kernel_address(softmax_online_kernel<float, float, 1024, k8>)},
      {"softmax", "online", "bfloat16, 32 threads a row, 4 packs a thread",
       kernel_address(softmax_online_kernel<bf16, bf16, 32, k4>)},
      {"softmax", "online", "bfloat16, 128 threads a row, 4 packs a thread",
       kernel_address(softmax_online_kernel<bf16, bf16, 128, k4>)},
      {"softmax", "online", "bfloat16, 512 threads a row, 4 packs a thread",
       kernel_address(softmax_online_kernel<bf16, bf16, 512, k4>)},
      {"softmax", "online", "bfloat16, 1024 threads a row, 4 packs a thread (rows <= SMs)",
       kernel_address(softmax_online_kernel<bf16, bf16, 1024, k4>)},
      {"softmax", "online", "bfloat16, 512 threads a row, 8 packs a thread as loaded",
       kernel_address(softmax_online_kernel<bf16, bf16, 512, k8, true>)},
      {"softmax", "online", "bfloat16, 1024 threads a row, 8 packs a thread as loaded",
       kernel_address(softmax_online_kernel<bf16, bf16, 1024, k8, true>)},
      {"softmax", "cluster", "float32, 8 CTAs of 512 threads a row",
       kernel_address(softmax_cluster_kernel<float, float, 512>)},
      {"softmax", "cluster", "float32, 8 CTAs of 1024 threads a row",
       kernel_address(softmax_cluster_kernel<float, float, 1024>)},
      {"softmax", "cluster", "bfloat16, 8 CTAs of 512 threads a row",
       kernel_address(softmax_cluster_kernel<bf16, bf16, 512>)},
      {"softmax", "cluster", "bfloat16, 8 CTAs of 1024 threads a row",
       kernel_address(softmax_cluster_kernel<bf16, bf16, 1024>)},
      {"softmax", "cluster", "bfloat16, 4 CTAs of 512 threads holding a row as loaded",
       kernel_address(softmax_cluster_kernel<bf16, bf16, 512, 16, 4, kWideRowVecs, true>)},
      {"softmax", "cluster", "bfloat16, 8 CTAs of 512 threads holding a row as loaded",
       kernel_address(softmax_cluster_kernel<bf16, bf16, 512, 16, 8, kWideRowVecs, true>)},
  };
}

MEMOPT_REGISTER_KERNELS(kSoftmaxKernels, softmax_kernels());

}  // namespace

}  // namespace memopt
