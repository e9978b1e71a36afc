// The kernel registry behind torch_memopt.kernel_info(op, variant): which
// compiled kernels each rung runs, so that their resource use (registers,
// shared and local memory: the ptxas report) can be read at run time through
// cudaFuncGetAttributes instead of from a build log.
//
// Each CUDA launcher file lists, at its end, the instantiations its rungs run
// for the shapes and dtypes `auto` and the benchmarks use, with
// MEMOPT_REGISTER_KERNELS; the list registers itself at load time, like a
// VariantTable (common/variants.h). Taking a kernel's address there changes no
// device code: the launchers instantiate the same kernels already.
//
// Free of torch headers, so the tuning harness (benchmarks/tune) can still
// build the launcher files with plain nvcc; without MEMOPT_WITH_CUDA (that
// harness) MEMOPT_REGISTER_KERNELS expands to nothing.
#pragma once

#include <string>
#include <vector>

namespace memopt {

struct KernelEntry {
  const char* op;       // "gemm", "layer_norm", ...
  const char* variant;  // a rung name, as variants() lists it
  const char* label;    // which instantiation: "bfloat16, 256 threads a row, 4 packs a thread"
  const void* kernel;   // the kernel as the CUDA runtime API takes it (kernel_address)
};

// A __global__ function of any signature as a `const void*`.
template <typename... Args>
const void* kernel_address(void (*kernel)(Args...)) {
  return reinterpret_cast<const void*>(kernel);
}

// Registers `entries` for the life of the process (construct it as a
// namespace-scope object: MEMOPT_REGISTER_KERNELS).
class KernelRegistration {
 public:
  explicit KernelRegistration(std::vector<KernelEntry> entries);
};

// One registered kernel's cudaFuncGetAttributes on the current device.
struct KernelAttributes {
  std::string label;
  int registers;                 // numRegs: registers a thread
  int static_shared_bytes;       // sharedSizeBytes: __shared__ arrays, excluding dynamic
  int local_bytes;               // localSizeBytes: a thread's local memory (spills, stack arrays)
  int max_threads_per_block;     // maxThreadsPerBlock: __launch_bounds__ and registers allow
  int max_dynamic_shared_bytes;  // maxDynamicSharedSizeBytes: the current launch limit
};

// The attributes of every kernel registered for (op, variant), in
// registration order. Throws a ValueError (c10::ValueError) listing the
// registered ops or variants when none match; a c10::Error when the build has
// no CUDA kernels, no CUDA GPU is visible, or the runtime refuses a kernel.
std::vector<KernelAttributes> kernel_attributes(const std::string& op, const std::string& variant);

}  // namespace memopt

#ifdef MEMOPT_WITH_CUDA
// MEMOPT_REGISTER_KERNELS(name, entries): `entries` is anything a
// std::vector<KernelEntry> is built from (a braced list, or a call). The
// outer braces keep `name(std::vector<...>(f()))` from declaring a function.
#define MEMOPT_REGISTER_KERNELS(name, ...) \
  const ::memopt::KernelRegistration name{std::vector<::memopt::KernelEntry>(__VA_ARGS__)}
#else
#define MEMOPT_REGISTER_KERNELS(name, ...) static_assert(true, "no CUDA kernels to register")
#endif
