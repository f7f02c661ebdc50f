// Dotted paths into a YAML tree ("ddp.bucket_mb", "cluster.network.bandwidth"), as --set,
// `sweep:` and `quick:` name values, for every spec kind.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace harness {

// Splits "a.b.c" into the keys to walk; the sweep and quick maps take a dotted path as one key
// ("sweep.ddp.bucket_mb" is {"sweep", "ddp.bucket_mb"}).
std::vector<std::string> path_keys(const std::string& dotted);

// Sets root[k1][k2]... = value, creating maps on the way. Shares `value`'s node, so its
// location in the file is kept for error messages.
void set_path(YAML::Node root, const std::vector<std::string>& keys, const YAML::Node& value);

// root[k1][k2]...; undefined when a key is missing or a step is not a map.
YAML::Node get_path(const YAML::Node& root, const std::vector<std::string>& keys);

// A value as a point's label shows it: the scalar itself, else flow-style YAML ("[1, 2]").
std::string scalar_text(const YAML::Node& node);

}  // namespace harness
