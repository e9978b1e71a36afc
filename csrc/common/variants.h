// The variant registry: which rungs of an op's optimization ladder this build
// can run on which device. Each backend file declares one VariantTable per op;
// the table registers itself at load time, so `torch_memopt.variants(op)` lists
// exactly what was compiled in, and `select()` turns a user's `variant=` string
// into a rung name or a ValueError that lists the valid ones.
#pragma once

#include <c10/core/DeviceType.h>
#include <c10/util/string_view.h>

#include <string>
#include <vector>

namespace memopt {

// CUDA compute capability as major * 10 + minor (90 for an H100/H200); 0 on the CPU.
using Capability = int;

struct Variant {
  const char* name;
  // Whether the rung runs on a device of this capability; nullptr means any.
  // Hopper-only rungs (sm_90a code) answer true for exactly 90.
  bool (*runs_on)(Capability) = nullptr;
};

inline bool hopper_only(Capability cap) { return cap == 90; }
// Rungs built on cp.async (sm_80+).
inline bool ampere_or_newer(Capability cap) { return cap >= 80; }

class VariantTable {
 public:
  VariantTable(const char* op, c10::DeviceType device, std::vector<Variant> rungs);

  // The rung to run: `requested` itself when it is one of names(cap), or
  // `auto_choice` for "auto". Anything else throws a ValueError listing the
  // variants this build and device can run.
  std::string select(c10::string_view requested, Capability cap,
                     const std::string& auto_choice) const;

  // "auto" first, then the rungs that run on `cap`, in ladder order.
  std::vector<std::string> names(Capability cap) const;

 private:
  const char* op_;
  c10::DeviceType device_;
  std::vector<Variant> rungs_;
};

// The registered names for (op, device), "auto" first; empty when this build
// has no kernels for that device.
std::vector<std::string> available_variants(const std::string& op, c10::DeviceType device,
                                            Capability cap);

}  // namespace memopt
