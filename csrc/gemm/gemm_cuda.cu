// CUDA launchers of memopt::gemm and memopt::linear. Each wrapper follows one
// order: check inputs -> pick the rung -> lay out operands -> allocate ->
// launch on the current stream under a device guard -> check the launch.
// Rungs live one per file in kernels/, numbered in ladder order; rungs 2-8 are
// the fp32 SIMT ladder (launchers in ladder_simple.cu, ladder_tiled.cu and
// ladder_warptiled.cu); mma, wgmma, wgmma_split, gemv and splitk are the
// bfloat16 / float16 tensor-core rungs and wgmma_tf32 the float32 one
// (half_gemm.h; mma_sm80.cu, wgmma_sm90.cu, gemv.cu, ...).
#include <ATen/Context.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <vector>

#include "common/activation.h"
#include "common/checks.h"
#include "common/cuda_launch.cuh"
#include "common/device_info.h"
#include "common/dispatch.h"
#include "common/dtype_names.h"
#include "common/kernel_registry.h"
#include "common/variants.h"
#include "gemm/gemm_common.h"
#include "gemm/gemm_plan.h"
#include "gemm/half_gemm.h"
#include "gemm/kernels/v01_naive.cuh"
#include "gemm/ladder.h"

namespace memopt {
namespace {

using LadderLauncher = void (*)(const GemmArgs&, cudaStream_t);

struct Rung {
  const char* name;
  LadderLauncher launch;  // nullptr for naive, which has its own dtype-generic launcher
  OperandLayout layout;
};

// The ladder in order. Rungs after naive are fp32 only.
constexpr Rung kRungs[] = {
    {"naive", nullptr, OperandLayout::any},
    {"coalesced", launch_gemm_coalesced, OperandLayout::any},
    {"smem_tiled", launch_gemm_smem_tiled, OperandLayout::row_major_a},
    {"smem_padded", launch_gemm_smem_padded, OperandLayout::row_major_a},
    {"double_buffered", launch_gemm_double_buffered, OperandLayout::row_major_a},
    {"register_blocked", launch_gemm_register_blocked, OperandLayout::row_major_a},
    {"vectorized", launch_gemm_vectorized, OperandLayout::row_major_a},
    {"warptiled", launch_gemm_warptiled, OperandLayout::row_major_a},
};

using HalfLauncher = void (*)(const HalfGemmArgs&, cudaStream_t);

bool ampere_or_newer(Capability cap) { return cap >= 80; }

// The tensor-core rungs after the fp32 ladder: bfloat16 / float16, and
// wgmma_tf32, which reads float32 as tf32 (what torch.mm does under
// torch.backends.cuda.matmul.allow_tf32; auto takes it only then).
struct HalfRung {
  const char* name;
  HalfLauncher launch;
  bool (*runs_on)(Capability);
  bool tf32 = false;  // float32 inputs read as tf32 (else bfloat16 / float16)
};
constexpr HalfRung kHalfRungs[] = {
    {"mma", launch_gemm_mma, ampere_or_newer},
    {"wgmma", launch_gemm_wgmma, hopper_only},
    {"wgmma_split", launch_gemm_wgmma_split, hopper_only},
    {"gemv", launch_gemm_gemv, ampere_or_newer},
    {"splitk", launch_gemm_splitk, hopper_only},
    {"wgmma_tf32", launch_gemm_wgmma, hopper_only, true},
    {"wgmma_streamk", launch_gemm_wgmma_streamk, hopper_only},
};

// gemm and linear offer the same rungs, named once in kRungs and kHalfRungs.
std::vector<Variant> ladder_variants() {
  std::vector<Variant> variants;
  for (const Rung& r : kRungs) variants.push_back({r.name});
  for (const HalfRung& r : kHalfRungs) variants.push_back({r.name, r.runs_on});
  return variants;
}
const VariantTable kGemmCudaVariants("gemm", c10::DeviceType::CUDA, ladder_variants());
const VariantTable kLinearCudaVariants("linear", c10::DeviceType::CUDA, ladder_variants());

const HalfRung* find_half_rung(const std::string& name) {
  for (const HalfRung& r : kHalfRungs) {
    if (name == r.name) return &r;
  }
  return nullptr;
}

const Rung& find_rung(const std::string& name) {
  for (const Rung& r : kRungs) {
    if (name == r.name) return r;
  }
  TORCH_CHECK(false, "memopt::gemm: no launcher for variant '", name, "'");
}

// Whether TMA can read `t` ([rows, cols]) as it is: unit inner stride, rows
// 16-byte aligned and a multiple of 16 bytes apart.
bool tma_readable(const at::Tensor& t) {
  const int64_t per_16_bytes = 16 / static_cast<int64_t>(t.element_size());
  return t.stride(1) == 1 && (t.size(0) == 1 || t.stride(0) % per_16_bytes == 0) &&
         reinterpret_cast<uintptr_t>(t.const_data_ptr()) % 16 == 0;
}

// b [K, N] as the launchers read it: W [N, K] (linear's weight, b = W.t()) or
// b itself (row-major gemm operand).
bool is_k_major(const at::Tensor& b) {
  const int64_t K = b.size(0), N = b.size(1);
  return K > 1 && b.stride(0) == 1 && !(N > 1 && b.stride(1) == 1);
}
at::Tensor weight_view(const at::Tensor& b) { return is_k_major(b) ? b.t() : b; }

// gemm_plan's tile shape as the launcher's enum (kWgmmaTiles lists both;
// 168 columns come at 128 rows only).
WgmmaTile wgmma_tile_of(TileShape t) {
  const bool two_consumers = t.m == 128;
  switch (t.n) {
    case 256: return two_consumers ? WgmmaTile::m128n256 : WgmmaTile::m64n256;
    case 192: return two_consumers ? WgmmaTile::m128n192 : WgmmaTile::m64n192;
    case 168: return WgmmaTile::m128n168;
    case 128: return two_consumers ? WgmmaTile::m128n128 : WgmmaTile::m64n128;
    default: return two_consumers ? WgmmaTile::m128n64 : WgmmaTile::m64n64;
  }
}

// auto: gemm_plan.h's choice for the shape (the rules and the measurements
// behind them are in gemm_plan.cpp).
std::string auto_rung(const at::Tensor& a, const at::Tensor& b, Capability cap) {
  const bool half = a.scalar_type() != at::kFloat;
  const bool tf32 = !half && at::globalContext().allowTF32CuBLAS();
  const bool tma_as_is = tma_readable(a) && tma_readable(weight_view(b)) &&
                         a.size(1) < (int64_t{1} << 31) && b.size(1) < (int64_t{1} << 31);
  return plan_gemm(a.size(0), b.size(1), a.size(1), half, cap,
                   (half || tf32) && cap == 90 ? sm_count() : 0, tma_as_is, is_k_major(b), tf32)
      .variant;
}

// The fp32 ladder's rungs and wgmma_tf32 read float32 only, the other
// tensor-core rungs bfloat16 / float16 only: name the ones the dtype can run.
void check_rung_dtype(const char* op, const std::string& rung, const at::Tensor& a,
                      Capability cap) {
  if (rung == "naive") return;
  const HalfRung* half = find_half_rung(rung);
  const bool takes_float = half == nullptr || half->tf32;
  const bool is_float = a.scalar_type() == at::kFloat;
  if (takes_float == is_float) return;
  std::string valid = "auto, naive";
  if (is_float) {
    for (const Rung& r : kRungs) {
      if (std::string(r.name) != "naive") valid += std::string(", ") + r.name;
    }
  }
  for (const HalfRung& r : kHalfRungs) {
    if (r.runs_on(cap) && r.tf32 == is_float) valid += std::string(", ") + r.name;
  }
  const char* ladder = takes_float ? "fp32 ladder" : "bfloat16/float16 tensor-core ladder";
  const char* takes = half == nullptr ? "float32"
                      : half->tf32    ? "float32 (read as tf32 by the tensor cores)"
                                      : "bfloat16 or float16";
  TORCH_CHECK_TYPE(false, "memopt::", op, ": variant '", rung, "' is a rung of the ", ladder,
                   " and takes ", takes, ", got ", dtype_name(a.scalar_type()), "; variants for ",
                   dtype_name(a.scalar_type()), ": ", valid);
}

// Tiled rungs read A with a unit k-stride and B either row-major (unit
// n-stride) or column-major (unit k-stride, linear's weight): an operand with
// other strides is copied once into that layout.
at::Tensor with_unit_k_stride(const at::Tensor& a) {
  return a.stride(1) == 1 || a.size(1) == 1 ? a : a.contiguous();
}
// The tensor-core launchers read A [M, K] and W [N, K] (or B [K, N]) with a
// unit inner stride. with_unit_k_stride and row_or_col_major keep a size-1
// dim as it came, and `contiguous()` does not touch its stride (torch ignores
// the strides of size-1 dims): a transposed [M, 1] input reached tma_ready
// with stride(1) = M, and gemm's B [1, N] with a step of 2 (K = 1) was read as
// if its columns were adjacent. A size-1 inner dim never steps, so it gets
// stride 1 in a view; any other non-unit inner stride gets a copy.
at::Tensor with_unit_inner_stride(const at::Tensor& t) {
  if (t.stride(1) == 1) return t;
  if (t.size(1) == 1) return t.as_strided({t.size(0), 1}, {t.stride(0), 1});
  return t.contiguous();
}
at::Tensor row_or_col_major(const at::Tensor& b) {
  return b.stride(1) == 1 || b.stride(0) == 1 || b.size(0) == 1 || b.size(1) == 1
             ? b
             : b.contiguous();
}

// `t.contiguous()` for a float32 t that is column-major (unit stride along
// dim 0: linear's weight seen as B = W.t(), or gemm's row-major b seen
// transposed), through our tiled transpose
// (transpose_fp32.cu): ATen's copy of such a view took ~125 us at 4096 x 4096
// on the H200, 3.5x its bytes' time. Any other layout goes to ATen.
at::Tensor contiguous_from_col_major(const at::Tensor& t, cudaStream_t stream) {
  if (t.scalar_type() != at::kFloat || t.stride(0) != 1 || t.size(0) < 2 || t.size(1) < 2) {
    return t.contiguous();
  }
  at::Tensor out = at::empty({t.size(0), t.size(1)}, t.options());
  // t's transpose [size(1), size(0)] is row-major, rows stride(1) apart.
  launch_transpose_fp32(t.const_data_ptr<float>(), t.stride(1), out.mutable_data_ptr<float>(),
                        t.size(1), t.size(0), stream);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

void launch_naive(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias,
                  at::Tensor& out, Activation act, cudaStream_t stream) {
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  TORCH_CHECK(ceil_div<int64_t>(N, kNaiveBlockCols) <= kMaxGridYZ,
              "memopt: the naive rung supports N up to ", kMaxGridYZ * kNaiveBlockCols,
              " output columns, got N = ", N);
  const dim3 block(kNaiveBlockRows, kNaiveBlockCols);
  const dim3 grid(static_cast<unsigned>(ceil_div<int64_t>(M, kNaiveBlockRows)),
                  static_cast<unsigned>(ceil_div<int64_t>(N, kNaiveBlockCols)));
  MEMOPT_DISPATCH_FLOAT_TYPES(a.scalar_type(), "memopt_gemm_naive", [&] {
    gemm_naive_kernel<scalar_t><<<grid, block, 0, stream>>>(
        a.const_data_ptr<scalar_t>(), a.stride(0), a.stride(1), b.const_data_ptr<scalar_t>(),
        b.stride(0), b.stride(1), bias.defined() ? bias.const_data_ptr<scalar_t>() : nullptr,
        out.mutable_data_ptr<scalar_t>(), M, N, K, act);
  });
}

// An fp32 ladder rung after naive on a [M, K] @ b [K, N] (K >= 0) into out.
void run_fp32_rung(const Rung& rung, const at::Tensor& a_in, const at::Tensor& b_in,
                   const at::Tensor& bias, at::Tensor& out, Activation act, cudaStream_t stream) {
  const int64_t M = a_in.size(0), K = a_in.size(1), N = b_in.size(1);
  const bool tiled = rung.layout == OperandLayout::row_major_a;
  TORCH_CHECK(K < (int64_t{1} << 31), "memopt::gemm: the fp32 ladder takes K < 2^31, got K = ", K);
  const at::Tensor a = tiled ? with_unit_k_stride(a_in) : a_in;
  at::Tensor b = tiled ? row_or_col_major(b_in) : b_in;
  // Linear's weight (B column-major: unit k-stride) reaches warptiled as
  // 4-byte transposed copies, row-major B as 16-byte ones: 0.78x against
  // 0.89x cuBLAS at 4096^3 (H200). A row-major copy of B moves 8 N K bytes
  // (4096^2: 128 MB, ~30 us at the copy bandwidth) where the GEMM takes 2 M N K
  // flops at ~46 TFLOP/s (4096^3: ~3 ms). Through ATen's copy it cost ~125 us
  // and broke even at M = 1024 (0.86x at 4096^3, fp32_linear_h200.json).
  // Through our transpose (contiguous_from_col_major) it costs 45-49 us: 0.89x
  // at 4096^3, 1024 rows 919.5 -> 847.6 us (fp32_linear_transpose_h200.json).
  // At 512 rows the column-major read cost 66 us over the row-major one
  // (520.4 against 454.0 us at N = K = 4096): past the copy's cost, so the
  // copy starts there; at 256 rows (~33 us) it would not.
  constexpr int64_t kRowMajorCopyRows = 512;
  if (rung.launch == launch_gemm_warptiled && M >= kRowMajorCopyRows && N > 1 && K > 1 &&
      b.stride(0) == 1 && b.stride(1) != 1) {
    b = contiguous_from_col_major(b, stream);
  }
  // The stride of a size-1 dim is never used to step, so it is set to 1:
  // a B [1, N] with a non-unit (or zero) n-stride is then read column-major,
  // through its n-stride, rather than as row-major with a unit stride it
  // does not have.
  const int64_t b_stride_k = K == 1 ? 1 : b.stride(0);
  const int64_t b_stride_n = N == 1 ? 1 : b.stride(1);
  // Not reachable from any input: row_or_col_major leaves b with a unit
  // stride, or a size-1 dim whose stride was just set to 1, or copies it.
  TORCH_INTERNAL_ASSERT(!tiled || b_stride_k == 1 || b_stride_n == 1);
  const GemmArgs args{a.const_data_ptr<float>(),
                      a.stride(0),
                      K == 1 ? 1 : a.stride(1),
                      b.const_data_ptr<float>(),
                      b_stride_k,
                      b_stride_n,
                      bias.defined() ? bias.const_data_ptr<float>() : nullptr,
                      out.mutable_data_ptr<float>(),
                      M,
                      N,
                      K,
                      act};
  // K = 0 (out = act(bias), or zeros): the coalesced rung's k-loop simply runs
  // no times; the tiled rungs assume at least one k-tile to stage.
  (K == 0 ? launch_gemm_coalesced : rung.launch)(args, stream);
}

// An [rows, cols] view of `t` whose rows start 16-byte aligned and lie a
// multiple of 16 bytes apart, as TMA reads them: `t` itself when it already
// is, else a copy into a padded scratch (its padding is never read: the
// tensor map's extent is the logical one).
at::Tensor tma_ready(const at::Tensor& t, cudaStream_t stream) {
  const int64_t rows = t.size(0), cols = t.size(1);
  if (tma_readable(t)) return t;
  // Not reachable from any input: run_half_rung gives both operands a unit
  // inner stride first (with_unit_inner_stride).
  TORCH_INTERNAL_ASSERT(t.stride(1) == 1);
  if (t.element_size() == 4) {  // float32 (tf32): rows padded to 4 elements by ATen's copy
    const int64_t padded = (cols + 3) / 4 * 4;
    at::Tensor scratch = at::empty({rows, padded}, t.options());
    at::Tensor view = scratch.narrow(1, 0, cols);
    view.copy_(t);
    return view;
  }
  const int64_t padded = (cols + 7) / 8 * 8;
  at::Tensor scratch = at::empty({rows, padded}, t.options());
  launch_pad_rows(t.const_data_ptr(), rows == 1 ? cols : t.stride(0), scratch.mutable_data_ptr(),
                  padded, rows, cols, stream);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return scratch.narrow(1, 0, cols);
}

// A tensor-core rung on a [M, K] @ b [K, N] (K >= 1) into out, bfloat16 /
// float16. b is read natively either row-major (gemm) or column-major
// (linear's weight, b = W.t()).
void run_half_rung(const HalfRung& rung, const at::Tensor& a_in, const at::Tensor& b_in,
                   const at::Tensor& bias, at::Tensor& out, Activation act, cudaStream_t stream) {
  const int64_t M = a_in.size(0), K = a_in.size(1), N = b_in.size(1);
  at::Tensor a = with_unit_k_stride(a_in);
  // B with a unit k-stride (and not also a unit n-stride: a [K, 1] b is
  // row-major) is linear's layout, W [N, K] read through b = W.t().
  const at::Tensor b = row_or_col_major(b_in);
  bool k_major = is_k_major(b);
  // Operands as the launchers read them: A [M, K] and W [N, K] or B [K, N],
  // each with unit inner stride (a size-1 inner dim's stride is arbitrary).
  at::Tensor w = weight_view(b);
  if (rung.tf32 && !k_major) {
    // tf32 wgmma reads B only K-major: gemm's row-major b [K, N] goes in as
    // a W [N, K] copy (K x N x 8 bytes moved; at 4096^3 the gemm layout takes
    // 416 us against linear's 384, H200: tf32_transpose_h200.json; through
    // ATen's copy it took 536).
    w = contiguous_from_col_major(b.t(), stream);
    k_major = true;
  }
  a = with_unit_inner_stride(a);
  w = with_unit_inner_stride(w);
  const bool streamk = rung.launch == launch_gemm_wgmma_streamk;
  const bool tma_rung = rung.launch == launch_gemm_wgmma || rung.launch == launch_gemm_splitk ||
                        rung.launch == launch_gemm_wgmma_split || streamk;
  if (tma_rung) {
    // TMA needs 16-byte-aligned rows: re-lay the operands that break it
    // (e.g. K = 4095) once; the copy is part of the op's time.
    a = tma_ready(a, stream);
    w = tma_ready(w, stream);
  }
  // A single row's stride never steps: give it one TMA accepts (a multiple
  // of 8 elements, at least the row).
  const auto row_stride = [](const at::Tensor& t) {
    return t.size(0) == 1 ? (t.size(1) + 7) / 8 * 8 : t.stride(0);
  };
  HalfGemmArgs args{a.const_data_ptr(),
                    row_stride(a),
                    w.const_data_ptr(),
                    row_stride(w),
                    k_major,
                    bias.defined() ? bias.const_data_ptr() : nullptr,
                    out.mutable_data_ptr(),
                    M,
                    N,
                    K,
                    act,
                    rung.tf32                             ? HalfType::tf32
                    : a_in.scalar_type() == at::kBFloat16 ? HalfType::bf16
                                                          : HalfType::fp16,
                    rung.launch == launch_gemm_wgmma_split
                        ? wgmma_split_count(M, N, K, sm_count(), true)
                        : 0,
                    wgmma_tile_of(wgmma_tile(M, N, rung.tf32 ? 2 * K : K, sm_count(),
                                             k_major && !rung.tf32))};
  TORCH_CHECK(!tma_rung || wgmma_operands_ok(args), "memopt: the ", rung.name,
              " rung takes M, N, K < 2^31 (TMA coordinates are 32-bit), got M = ", M, ", N = ", N,
              ", K = ", K);
  TORCH_CHECK(rung.launch != launch_gemm_splitk || splitk_shape_ok(args),
              "memopt: the splitk rung takes M <= 4194240 (65535 tiles of 64 tokens), got M = ", M,
              "; use variant 'auto' or 'wgmma' for large M");
  TORCH_CHECK(rung.launch != launch_gemm_wgmma_split || wgmma_split_shape_ok(args),
              "memopt: the wgmma_split rung takes at most 2^28 output tiles of 128 x 256, got M = ",
              M, ", N = ", N, "; use variant 'auto' or 'wgmma'");
  at::Tensor workspace;  // lives to the end of the call: the caching allocator keeps it stream-ordered
  if (streamk) {
    const TileShape tile = stream_k_tile();
    args.tile = wgmma_tile_of(tile);
    const StreamKWorkspace ws = stream_k_workspace(stream_k_split(M, N, K, tile, sm_count()), tile);
    if (ws.bytes > 0) {
      workspace = at::empty({ws.bytes}, a.options().dtype(at::kByte));
      args.workspace = workspace.mutable_data_ptr();
      C10_CUDA_CHECK(cudaMemsetAsync(args.workspace, 0, ws.flag_bytes, stream));
    }
  }
  rung.launch(args, stream);
}

// out [M, N] = act(a [M, K] @ b [K, N] + bias [N]) with the named rung, on the
// current stream of a's device.
at::Tensor launch_matmul(const std::string& rung_name, const at::Tensor& a,
                         const at::Tensor& b, const std::optional<at::Tensor>& bias,
                         Activation act) {
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  const c10::cuda::CUDAGuard device_guard(a.device());
  at::Tensor out = at::empty({M, N}, a.options());
  if (out.numel() == 0) return out;
  const at::Tensor bias_c =
      bias.has_value() && bias->defined() ? bias->contiguous() : at::Tensor();
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  const HalfRung* half = find_half_rung(rung_name);
  // K = 0 leaves the tensor-core rungs no k-tile to stage: out = act(bias),
  // or zeros, from the naive rung.
  if (rung_name == "naive" || (half != nullptr && K == 0)) {
    launch_naive(a, b, bias_c, out, act, stream);
  } else if (half != nullptr) {
    run_half_rung(*half, a, b, bias_c, out, act, stream);
  } else {
    run_fp32_rung(find_rung(rung_name), a, b, bias_c, out, act, stream);
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

at::Tensor gemm_cuda(const at::Tensor& a, const at::Tensor& b, c10::string_view variant) {
  check_gemm_inputs(a, b);
  const Capability cap = capability_of(a);
  const std::string rung = kGemmCudaVariants.select(variant, cap, auto_rung(a, b, cap));
  check_rung_dtype("gemm", rung, a, cap);
  return launch_matmul(rung, a, b, std::nullopt, Activation::none);
}

at::Tensor linear_cuda(const at::Tensor& input, const at::Tensor& weight,
                       const std::optional<at::Tensor>& bias, c10::string_view activation,
                       c10::string_view variant) {
  check_linear_inputs(input, weight, bias);
  const Activation act = parse_activation(std::string(activation));
  const Capability cap = capability_of(input);
  const at::Tensor rows = flatten_to_rows(input);
  const std::string rung =
      kLinearCudaVariants.select(variant, cap, auto_rung(rows, weight.t(), cap));
  check_rung_dtype("linear", rung, input, cap);
  // weight [N, K] read as B [K, N] through swapped strides (column-major B):
  // no transposing copy.
  const at::Tensor out = launch_matmul(rung, rows, weight.t(), bias, act);
  return out.view(linear_output_sizes(input, weight.size(0)));
}

}  // namespace

TORCH_LIBRARY_IMPL(memopt, CUDA, m) {
  m.impl("gemm", &gemm_cuda);
  m.impl("linear", &linear_cuda);
}

// kernel_info (common/kernel_registry.h): naive's one kernel takes any strides,
// so gemm and linear run the same instantiations; float32 and bfloat16, the
// dtypes the GEMM benchmarks time. The other rungs register in their own files.
namespace {

std::vector<KernelEntry> naive_kernels(const char* op) {
  return {{op, "naive", "float32", kernel_address(gemm_naive_kernel<float>)},
          {op, "naive", "bfloat16", kernel_address(gemm_naive_kernel<at::BFloat16>)}};
}

MEMOPT_REGISTER_KERNELS(kGemmNaiveKernels, naive_kernels("gemm"));
MEMOPT_REGISTER_KERNELS(kLinearNaiveKernels, naive_kernels("linear"));

}  // namespace

}  // namespace memopt
