#include "harness/spec/spec_kind.h"

#include <algorithm>

#include "common/input_error.h"
#include "common/text_util.h"

namespace harness {

const std::vector<std::string>& spec_kind_names() {
  static const std::vector<std::string> names = {"train", "plan", "simulate", "profile",
                                                 "spmd_search"};
  return names;
}

std::string to_string(SpecKind kind) { return spec_kind_names()[static_cast<size_t>(kind)]; }

SpecKind read_spec_kind(const YAML::Node& root, const SpecOrigin& origin) {
  if (!root.IsMap() || !root["kind"]) return SpecKind::kTrain;
  const YAML::Node node = root["kind"];
  const std::string name = node.IsScalar() ? node.Scalar() : "";
  const auto& names = spec_kind_names();
  const auto found = std::find(names.begin(), names.end(), name);
  if (found != names.end()) return static_cast<SpecKind>(found - names.begin());
  std::string message = origin.where(node, "kind") + ": kind: unknown kind " + describe_node(node) +
                        " (expected one of: " + join(names, ", ") + ")";
  if (auto hint = closest_match(name, names); !hint.empty()) {
    message += "; did you mean '" + hint + "'?";
  }
  throw InputError(message);
}

}  // namespace harness
