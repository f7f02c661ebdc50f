// A spec's `sweep:` map, read and expanded the same way for every spec kind: each entry is a
// dotted path with a non-empty list of values; the points are their cartesian product, the
// last axis varying fastest (nested loops in file order), ids p000, p001, ...
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "harness/spec/yaml_reader.h"

namespace harness {

struct SweepAxis {
  std::string path;  // dotted path, e.g. "ddp.bucket_mb"
  std::vector<YAML::Node> values;
};

// One point of a sweep.
struct SweepPoint {
  size_t index = 0;
  std::string id;     // "p000"
  std::string label;  // "ddp.bucket_mb=5, run.world_size=2", or "default" without axes
  std::vector<std::pair<std::string, std::string>> coordinates;  // (path, value) per axis
};

// Reads `node` (absent: no axes) named `where` in messages ("sweep", "simulate.sweep"); every
// path must be one of `sweepable`. InputError with file:line:column otherwise.
std::vector<SweepAxis> read_sweep_axes(const YAML::Node& node, const SpecOrigin& origin,
                                       const std::string& where,
                                       const std::vector<std::string>& sweepable);

// Points in the product of `axes`.
size_t sweep_size(const std::vector<SweepAxis>& axes);

// Calls `visit` for every point in order, after writing the point's values into `tree` at
// the axes' paths (so that `tree` then reads as that point's spec).
void expand_sweep(const std::vector<SweepAxis>& axes, YAML::Node tree,
                  const std::function<void(const SweepPoint&)>& visit);

}  // namespace harness
