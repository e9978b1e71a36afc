#include "common/kernel_registry.h"

#include <c10/util/Exception.h>

#include "common/variants.h"

#include <algorithm>
#include <sstream>

#ifdef MEMOPT_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace memopt {
namespace {

// A function-local static: the launcher files register during static
// initialization, in an order C++ leaves unspecified.
std::vector<KernelEntry>& registry() {
  static std::vector<KernelEntry> entries;
  return entries;
}

#ifdef MEMOPT_WITH_CUDA
std::string join(const std::vector<std::string>& names) {
  std::ostringstream os;
  for (size_t i = 0; i < names.size(); ++i) os << (i ? ", " : "") << names[i];
  return os.str();
}

// Each name once, in registration order (across files: static-initialization
// order, which C++ leaves unspecified).
std::vector<std::string> names_once(const std::vector<KernelEntry>& entries,
                                    const char* KernelEntry::*field) {
  std::vector<std::string> names;
  for (const KernelEntry& e : entries) {
    if (std::find(names.begin(), names.end(), e.*field) == names.end()) names.emplace_back(e.*field);
  }
  return names;
}

// The variants of `op` that have kernels, in the order of its VariantTable
// (the ladder's), as capability 9.0 lists them: Hopper runs every rung. Any
// registered name the table lacks comes last.
std::vector<std::string> registered_variants(const std::string& op,
                                             const std::vector<KernelEntry>& of_op) {
  const std::vector<std::string> registered = names_once(of_op, &KernelEntry::variant);
  std::vector<std::string> ordered;
  for (const std::string& name : available_variants(op, c10::DeviceType::CUDA, 90)) {
    if (std::find(registered.begin(), registered.end(), name) != registered.end()) {
      ordered.push_back(name);
    }
  }
  for (const std::string& name : registered) {
    if (std::find(ordered.begin(), ordered.end(), name) == ordered.end()) ordered.push_back(name);
  }
  return ordered;
}

// The entries of (op, variant); a ValueError naming what is registered when
// there are none.
std::vector<KernelEntry> entries_of(const std::string& op, const std::string& variant) {
  std::vector<KernelEntry> of_op, matching;
  for (const KernelEntry& e : registry()) {
    if (op == e.op) of_op.push_back(e);
  }
  TORCH_CHECK_VALUE(!of_op.empty(), "memopt::kernel_info: unknown op '", op,
                    "'; ops with CUDA kernels: ", join(names_once(registry(), &KernelEntry::op)));
  for (const KernelEntry& e : of_op) {
    if (variant == e.variant) matching.push_back(e);
  }
  TORCH_CHECK_VALUE(!matching.empty(), "memopt::kernel_info: ", op, " has no variant '", variant,
                    "'", variant == "auto" ? " (auto picks one of the others by shape and dtype)" : "",
                    "; variants: ", join(registered_variants(op, of_op)));
  return matching;
}
#endif

}  // namespace

KernelRegistration::KernelRegistration(std::vector<KernelEntry> entries) {
  std::vector<KernelEntry>& all = registry();
  all.insert(all.end(), entries.begin(), entries.end());
}

std::vector<KernelAttributes> kernel_attributes(const std::string& op, const std::string& variant) {
#ifndef MEMOPT_WITH_CUDA
  (void)op;
  (void)variant;
  TORCH_CHECK(false, "memopt::kernel_info: this build has no CUDA kernels (compiled without "
                     "nvcc, or MEMOPT_CPU_ONLY=1); it needs a CUDA build and a CUDA GPU");
#else
  const std::vector<KernelEntry> entries = entries_of(op, variant);
  // cudaFuncGetAttributes reads the kernel as loaded on the current device,
  // so it needs one; its failures are cleared so that no later launch check
  // reports them.
  int devices = 0;
  const cudaError_t count_error = cudaGetDeviceCount(&devices);
  if (count_error != cudaSuccess) cudaGetLastError();
  TORCH_CHECK(count_error == cudaSuccess && devices > 0,
              "memopt::kernel_info needs a CUDA GPU (cudaFuncGetAttributes reads the kernel as "
              "loaded on a device) and found none: ",
              count_error == cudaSuccess ? "no devices" : cudaGetErrorString(count_error));
  std::vector<KernelAttributes> out;
  for (const KernelEntry& e : entries) {
    cudaFuncAttributes attr{};
    const cudaError_t error = cudaFuncGetAttributes(&attr, e.kernel);
    if (error != cudaSuccess) cudaGetLastError();
    TORCH_CHECK(error == cudaSuccess, "memopt::kernel_info: cudaFuncGetAttributes failed for ", op,
                " variant ", variant, " (", e.label, "): ", cudaGetErrorString(error));
    out.push_back({e.label, attr.numRegs, static_cast<int>(attr.sharedSizeBytes),
                   static_cast<int>(attr.localSizeBytes), attr.maxThreadsPerBlock,
                   attr.maxDynamicSharedSizeBytes});
  }
  return out;
#endif
}

}  // namespace memopt
