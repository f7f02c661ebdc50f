// The harness's change-point detector as a filter for the peer test (otava_peer.py): reads
// {"window": W, "max_pvalue": P, "series": {"name": [values], ...}} on standard input and
// writes {"name": [change point indices], ...}. With "merge_retest": "otava_0_8", the merge step
// retests as otava 0.8.0 does (harness/history/change_points.h).
#include <iostream>
#include <nlohmann/json.hpp>

#include "harness/history/change_points.h"

int main() {
  const nlohmann::json input = nlohmann::json::parse(std::cin);
  harness::ChangePointOptions options;
  options.window = input.at("window").get<size_t>();
  options.max_pvalue = input.at("max_pvalue").get<double>();
  if (input.value("merge_retest", "neighbours") == "otava_0_8") {
    options.retest = harness::MergeRetest::otava_0_8;
  }
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, values] : input.at("series").items()) {
    nlohmann::json indices = nlohmann::json::array();
    for (const auto& point : harness::change_points(values.get<std::vector<double>>(), options)) {
      indices.push_back(point.index);
    }
    out[name] = indices;
  }
  std::cout << out.dump() << "\n";
}
