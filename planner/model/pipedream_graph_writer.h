// Writes a layer profile in PipeDream's graph.txt format, the format the DAPPLE planner
// imports (planner/model/profile_graph.h): an Input node, one node per layer in chain order, and an
// edge between consecutive nodes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace harness {

struct GraphLayer {
  std::string name;
  std::string kind;
  double forward_ms = 0;
  double backward_ms = 0;
  int64_t activation_bytes = 0;
  int64_t parameter_bytes = 0;
};

std::string pipedream_graph(const std::vector<GraphLayer>& layers, int64_t input_bytes);

}  // namespace harness
