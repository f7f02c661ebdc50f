#include "harness/spec/sweep.h"

#include <algorithm>
#include <cstdio>

#include "common/input_error.h"
#include "common/limits.h"
#include "common/text_util.h"
#include "harness/spec/yaml_paths.h"

namespace harness {

std::vector<SweepAxis> read_sweep_axes(const YAML::Node& node, const SpecOrigin& origin,
                                       const std::string& where,
                                       const std::vector<std::string>& sweepable) {
  std::vector<SweepAxis> axes;
  if (!node) return axes;
  MapReader reader(node, where, origin);  // checks it is a map
  for (const auto& entry : node) {
    const std::string path = entry.first.Scalar();
    if (std::find(sweepable.begin(), sweepable.end(), path) == sweepable.end()) {
      std::string message =
          where + ": '" + path + "' cannot be swept (sweepable: " + join(sweepable, ", ") + ")";
      if (auto hint = closest_match(path, sweepable); !hint.empty()) {
        message = where + ": unknown key '" + path + "' (did you mean '" + hint + "'?)";
      }
      throw InputError(origin.where(entry.first, where + "." + path) + ": " + message);
    }
    const YAML::Node& values = entry.second;
    if (!values.IsSequence() || values.size() == 0) {
      throw InputError(origin.where(values, where + "." + path) + ": " + where + "." + path +
                       ": expected a non-empty list of values, got " + describe_node(values));
    }
    SweepAxis axis{path, {}};
    for (const auto& value : values) axis.values.push_back(value);
    axes.push_back(std::move(axis));
  }
  if (sweep_size(axes) > static_cast<size_t>(kMaxSweepPoints)) {
    throw InputError(origin.where(node, where) + ": " + where + ": more than " +
                     std::to_string(kMaxSweepPoints) + " points (the product of its axes)");
  }
  return axes;
}

size_t sweep_size(const std::vector<SweepAxis>& axes) {
  // Saturates instead of overflowing: a product past the limit is reported as past it.
  size_t total = 1;
  for (const auto& axis : axes) {
    if (axis.values.size() > static_cast<size_t>(kMaxSweepPoints) ||
        total > static_cast<size_t>(kMaxSweepPoints)) {
      return static_cast<size_t>(kMaxSweepPoints) + 1;
    }
    total *= axis.values.size();
  }
  return total;
}

void expand_sweep(const std::vector<SweepAxis>& axes, YAML::Node tree,
                  const std::function<void(const SweepPoint&)>& visit) {
  const size_t total = sweep_size(axes);
  std::vector<size_t> digit(axes.size(), 0);
  for (size_t index = 0; index < total; ++index) {
    size_t rest = index;
    for (size_t a = axes.size(); a-- > 0;) {
      digit[a] = rest % axes[a].values.size();
      rest /= axes[a].values.size();
    }
    SweepPoint point;
    point.index = index;
    char id[32];
    std::snprintf(id, sizeof id, "p%03zu", index);
    point.id = id;
    std::vector<std::string> label_parts;
    for (size_t a = 0; a < axes.size(); ++a) {
      const YAML::Node& value = axes[a].values[digit[a]];
      set_path(tree, path_keys(axes[a].path), value);
      point.coordinates.emplace_back(axes[a].path, scalar_text(value));
      label_parts.push_back(axes[a].path + "=" + scalar_text(value));
    }
    point.label = label_parts.empty() ? "default" : join(label_parts, ", ");
    visit(point);
  }
}

}  // namespace harness
