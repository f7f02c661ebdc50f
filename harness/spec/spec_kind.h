// What a spec file is, from its top-level `kind:` (train when absent): the one place the
// string is read; everything after holds the enum.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "harness/spec/yaml_reader.h"

namespace harness {

enum class SpecKind { kTrain, kPlan, kSimulate, kProfile, kSpmdSearch };

// The names `kind:` accepts, in the order messages list them.
const std::vector<std::string>& spec_kind_names();
std::string to_string(SpecKind kind);

// root's `kind:`; InputError with file:line:column and the accepted names for anything else.
SpecKind read_spec_kind(const YAML::Node& root, const SpecOrigin& origin);

}  // namespace harness
