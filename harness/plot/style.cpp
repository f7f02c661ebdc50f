#include "harness/plot/style.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "common/text_util.h"

namespace harness {

std::string series_color(size_t index) {
  static const char* colors[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                 "#E69F00", "#56B4E9", "#000000", "#F0E442"};
  return std::string("rgb \"") + colors[index % std::size(colors)] + "\"";
}

std::string data_number(double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

std::string xtics_at(const std::vector<double>& input) {
  std::vector<double> values = input;
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  std::string tics = "set xtics (";
  for (size_t i = 0; i < values.size(); ++i) {
    tics += (i ? ", \"" : "\"") + format_number(values[i]) + "\" " + data_number(values[i]);
  }
  return tics + ")";
}

std::vector<PointGroup> group_points_except(const ResultSamples& samples, const std::string& axis) {
  std::vector<PointGroup> groups;
  std::map<std::string, size_t> index;
  for (const auto& point : samples.points) {
    std::vector<std::string> others;
    for (const auto& [name, value] : point.point.coordinates) {
      if (name != axis) others.push_back(name + "=" + value);
    }
    const std::string label = others.empty() ? "default" : join(others, ", ");
    auto [it, inserted] = index.emplace(label, groups.size());
    if (inserted) groups.push_back({label, {}});
    groups[it->second].points.push_back(&point);
  }
  return groups;
}

std::string experiment_title(const ResultSamples& samples) {
  return samples.manifest.experiment + ": ";
}

}  // namespace harness
