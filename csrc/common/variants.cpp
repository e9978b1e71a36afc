#include "common/variants.h"

#include <c10/util/Exception.h>

#include <map>
#include <sstream>
#include <utility>

namespace memopt {
namespace {

using Registry = std::map<std::pair<std::string, c10::DeviceType>, const VariantTable*>;

// A function-local static: tables in other translation units register during
// static initialization, in an order C++ leaves unspecified.
Registry& registry() {
  static Registry tables;
  return tables;
}

std::string join(const std::vector<std::string>& names) {
  std::ostringstream os;
  for (size_t i = 0; i < names.size(); ++i) os << (i ? ", " : "") << names[i];
  return os.str();
}

}  // namespace

VariantTable::VariantTable(const char* op, c10::DeviceType device,
                           std::vector<Variant> rungs)
    : op_(op), device_(device), rungs_(std::move(rungs)) {
  registry()[{op_, device_}] = this;
}

std::vector<std::string> VariantTable::names(Capability cap) const {
  std::vector<std::string> out{"auto"};
  for (const Variant& rung : rungs_) {
    if (rung.runs_on == nullptr || rung.runs_on(cap)) out.emplace_back(rung.name);
  }
  return out;
}

std::string VariantTable::select(c10::string_view requested, Capability cap,
                                 const std::string& auto_choice) const {
  // "auto" first: names() builds a vector of strings, on the launch path of every call.
  if (requested == "auto") return auto_choice;
  const std::vector<std::string> valid = names(cap);
  const std::string name(requested.data(), requested.size());
  for (const std::string& v : valid) {
    if (v == name) return name;
  }
  TORCH_CHECK_VALUE(false, "memopt::", op_, ": unknown variant '", name, "' for ",
                    c10::DeviceTypeName(device_, /*lower_case=*/true),
                    " tensors; valid variants: ", join(valid));
}

std::vector<std::string> available_variants(const std::string& op, c10::DeviceType device,
                                            Capability cap) {
  const auto it = registry().find({op, device});
  if (it == registry().end()) return {};
  return it->second->names(cap);
}

}  // namespace memopt
