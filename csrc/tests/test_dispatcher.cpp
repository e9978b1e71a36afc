// The memopt ops as a LibTorch user reaches them: by name through the c10
// dispatcher, with no Python and no header of ours. Linked against
// libmemopt_ops.so (CMakeLists.txt keeps it on the link line, so its static
// TORCH_LIBRARY registrations run at load) and run by ctest.
//
// Checks: every schema is registered exactly as the op contract in DESIGN.md
// writes it, with a CPU kernel (and a CUDA kernel in a CUDA build); each op's
// CPU result on odd-shaped random inputs matches the stock ATen op computed in
// float64; bad input raises c10::Error naming the op and what was expected.
// With a GPU present, gemm also runs on CUDA. Exits 1 if any check failed.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/jit/frontend/function_schema_parser.h>

#include <functional>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

int failures = 0;

void report(bool ok, const std::string& what, const std::string& detail = "") {
  std::cout << (ok ? "ok    " : "FAIL  ") << what;
  if (!detail.empty()) std::cout << ": " << detail;
  std::cout << std::endl;
  if (!ok) ++failures;
}

// Runs one check; an exception escaping it is that check's failure, not the end
// of the whole run.
void check(const std::string& what, const std::function<void()>& body) {
  try {
    body();
  } catch (const std::exception& e) {
    report(false, what, std::string("unexpected exception: ") + e.what());
  }
}

void expect_close(const std::string& what, const at::Tensor& got, const at::Tensor& want,
                  double rtol, double atol) {
  if (got.sizes() != want.sizes()) {
    std::ostringstream msg;
    msg << "shape " << got.sizes() << ", expected " << want.sizes();
    report(false, what, msg.str());
    return;
  }
  const at::Tensor got64 = got.to(at::kCPU, at::kDouble);
  const bool ok = at::allclose(got64, want, rtol, atol);
  std::ostringstream msg;
  msg << "max abs error " << (got64 - want).abs().max().item<double>();
  report(ok, what, msg.str());
}

void expect_error(const std::string& what, const std::function<void()>& call,
                  const std::string& message_part) {
  try {
    call();
  } catch (const c10::Error& e) {
    const std::string message = e.what_without_backtrace();
    const bool ok = message.find(message_part) != std::string::npos;
    report(ok, what,
           ok ? message : "message \"" + message + "\" lacks \"" + message_part + "\"");
    return;
  }
  report(false, what, "no c10::Error raised");
}

c10::OperatorHandle find_op(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "");
}

// The op contract, word for word as DESIGN.md writes it.
const std::vector<std::pair<const char*, const char*>> kSchemas = {
    {"memopt::gemm", "memopt::gemm(Tensor a, Tensor b, *, str variant=\"auto\") -> Tensor"},
    {"memopt::linear",
     "memopt::linear(Tensor input, Tensor weight, Tensor? bias=None, *, "
     "str activation=\"none\", str variant=\"auto\") -> Tensor"},
    {"memopt::layer_norm",
     "memopt::layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, "
     "Tensor? bias=None, float eps=1e-05, *, str variant=\"auto\") -> Tensor"},
    {"memopt::rms_norm",
     "memopt::rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, "
     "float? eps=None, *, str variant=\"auto\") -> Tensor"},
    {"memopt::softmax",
     "memopt::softmax(Tensor input, int dim=-1, ScalarType? dtype=None, *, "
     "str variant=\"auto\") -> Tensor"},
};

void test_registrations() {
  for (const auto& [name, schema] : kSchemas) {
    check(std::string(name) + " registration", [&, name = name, schema = schema] {
      const c10::OperatorHandle op = find_op(name);
      // Compared parsed, not printed: how c10 prints a float default varies.
      const c10::FunctionSchema expected = torch::jit::parseSchema(schema, false);
      std::ostringstream registered;
      registered << op.schema();
      const bool same = op.schema() == expected;
      report(same, std::string(name) + " schema",
             same ? registered.str()
                  : "registered " + registered.str() + ", expected " + schema);
      report(op.hasKernelForDispatchKey(c10::DispatchKey::CPU), std::string(name) + " CPU kernel");
#ifdef MEMOPT_WITH_CUDA
      report(op.hasKernelForDispatchKey(c10::DispatchKey::CUDA),
             std::string(name) + " CUDA kernel");
#endif
    });
  }
}

using GemmFn = at::Tensor(const at::Tensor&, const at::Tensor&, c10::string_view);
using LinearFn = at::Tensor(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&,
                            c10::string_view, c10::string_view);
using LayerNormFn = at::Tensor(const at::Tensor&, c10::SymIntArrayRef,
                               const std::optional<at::Tensor>&,
                               const std::optional<at::Tensor>&, double, c10::string_view);
using RmsNormFn = at::Tensor(const at::Tensor&, c10::SymIntArrayRef,
                             const std::optional<at::Tensor>&, std::optional<double>,
                             c10::string_view);
using SoftmaxFn = at::Tensor(const at::Tensor&, int64_t, std::optional<c10::ScalarType>,
                             c10::string_view);

// Shapes are odd on purpose: no dimension is a multiple of a tile or vector width.
void test_gemm(const at::Device device) {
  const std::string where = device.is_cpu() ? " (cpu)" : " (cuda)";
  check("memopt::gemm" + where, [&] {
    auto gemm = find_op("memopt::gemm").typed<GemmFn>();
    const auto options = at::TensorOptions().dtype(at::kFloat).device(device);
    const at::Tensor a = at::randn({37, 53}, options);
    const at::Tensor b = at::randn({53, 29}, options);
    const at::Tensor want = at::mm(a.to(at::kCPU, at::kDouble), b.to(at::kCPU, at::kDouble));
    expect_close("memopt::gemm matches at::mm" + where, gemm.call(a, b, "auto"), want, 1e-4,
                 1e-4);
    // A transposed (non-contiguous) operand is an ordinary input.
    const at::Tensor bt = at::randn({29, 53}, options).t();
    expect_close("memopt::gemm, transposed b" + where, gemm.call(a, bt, "auto"),
                 at::mm(a.to(at::kCPU, at::kDouble), bt.to(at::kCPU, at::kDouble)), 1e-4, 1e-4);
  });
}

void test_gemm_errors() {
  auto gemm = find_op("memopt::gemm").typed<GemmFn>();
  const at::Tensor a = at::randn({4, 6});
  expect_error("memopt::gemm rejects a 3-D a", [&] { gemm.call(a.unsqueeze(0), a.t(), "auto"); },
               "memopt::gemm: expected a to be a 2-D tensor");
  expect_error("memopt::gemm rejects mismatched K", [&] { gemm.call(a, a, "auto"); },
               "memopt::gemm: expected b.size(0) to equal a.size(1)");
  const at::Tensor a64 = a.to(at::kDouble);
  expect_error("memopt::gemm rejects float64", [&] { gemm.call(a64, a64.t(), "auto"); },
               "dtype float32, float16 or bfloat16, got float64");
  expect_error("memopt::gemm rejects an unknown variant",
               [&] { gemm.call(a, a.t(), "no_such_variant"); }, "no_such_variant");
}

void test_linear() {
  check("memopt::linear", [] {
    auto linear = find_op("memopt::linear").typed<LinearFn>();
    const at::Tensor input = at::randn({3, 5, 21});
    const at::Tensor weight = at::randn({11, 21});
    const at::Tensor bias = at::randn({11});
    const at::Tensor want =
        at::relu(at::linear(input.to(at::kDouble), weight.to(at::kDouble), bias.to(at::kDouble)));
    expect_close("memopt::linear (relu) matches relu(at::linear)",
                 linear.call(input, weight, bias, "relu", "auto"), want, 1e-4, 1e-4);
  });
}

void test_norms() {
  check("memopt::layer_norm", [] {
    auto layer_norm = find_op("memopt::layer_norm").typed<LayerNormFn>();
    const at::Tensor input = at::randn({6, 7, 45});
    const at::Tensor weight = at::randn({45});
    const at::Tensor bias = at::randn({45});
    const std::vector<c10::SymInt> shape = {c10::SymInt(45)};
    const at::Tensor want = at::layer_norm(input.to(at::kDouble), {45}, weight.to(at::kDouble),
                                           bias.to(at::kDouble), 1e-5);
    expect_close("memopt::layer_norm matches at::layer_norm",
                 layer_norm.call(input, shape, weight, bias, 1e-5, "auto"), want, 1e-4, 1e-4);
    expect_error("memopt::layer_norm rejects a mismatched normalized_shape",
                 [&] {
                   const std::vector<c10::SymInt> wrong = {c10::SymInt(44)};
                   layer_norm.call(input, wrong, std::nullopt, std::nullopt, 1e-5, "auto");
                 },
                 "memopt::layer_norm: expected input of shape [*, 44]");
  });
  check("memopt::rms_norm", [] {
    auto rms_norm = find_op("memopt::rms_norm").typed<RmsNormFn>();
    const at::Tensor input = at::randn({9, 3, 19});
    const at::Tensor weight = at::randn({3, 19});
    const std::vector<c10::SymInt> shape = {c10::SymInt(3), c10::SymInt(19)};
    const at::Tensor want = at::rms_norm(input.to(at::kDouble), {3, 19}, weight.to(at::kDouble),
                                         1e-6);
    expect_close("memopt::rms_norm matches at::rms_norm",
                 rms_norm.call(input, shape, weight, 1e-6, "auto"), want, 1e-4, 1e-4);
  });
}

void test_softmax() {
  check("memopt::softmax", [] {
    auto softmax = find_op("memopt::softmax").typed<SoftmaxFn>();
    const at::Tensor input = at::randn({5, 33, 7});
    expect_close("memopt::softmax(dim=-1) matches at::softmax",
                 softmax.call(input, -1, std::nullopt, "auto"),
                 at::softmax(input.to(at::kDouble), -1), 1e-5, 1e-6);
    expect_close("memopt::softmax(dim=1) matches at::softmax",
                 softmax.call(input, 1, std::nullopt, "auto"),
                 at::softmax(input.to(at::kDouble), 1), 1e-5, 1e-6);
    expect_error("memopt::softmax rejects an out-of-range dim",
                 [&] { softmax.call(input, 3, std::nullopt, "auto"); },
                 "memopt::softmax: expected dim in [-3, 2]");
  });
}

}  // namespace

int main() {
  at::manual_seed(0);
  test_registrations();
  test_gemm(at::kCPU);
  test_gemm_errors();
  test_linear();
  test_norms();
  test_softmax();
#ifdef MEMOPT_WITH_CUDA
  if (at::hasCUDA()) {
    test_gemm(at::Device(at::kCUDA, 0));
  } else {
    std::cout << "skip  CUDA checks: no CUDA device" << std::endl;
  }
#endif
  std::cout << (failures == 0 ? "all checks passed" : std::to_string(failures) + " check(s) failed")
            << std::endl;
  return failures == 0 ? 0 : 1;
}
