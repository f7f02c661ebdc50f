// Per-layer costs of a model, from the same PipeDream profile `harness plan` reads: forward
// and backward seconds at the profile batch, output activation and parameter bytes. Compute
// time scales linearly with the samples a rank runs (as the planner assumes); activation
// bytes too; parameter bytes do not.
#pragma once

#include <string>
#include <vector>

#include "planner/model/profile_graph.h"

namespace harness::simulator {

struct LayerCosts {
  std::string source;
  double profile_batch = 1;
  std::vector<std::string> ids;    // "node12"
  std::vector<std::string> names;  // description
  std::vector<double> forward_s, backward_s, activation_bytes, parameter_bytes;
  std::vector<std::vector<int>> successors;
  std::vector<int> order;  // a topological order (the planner's)

  int size() const { return static_cast<int>(ids.size()); }
  double total_forward_s() const;
  double total_backward_s() const;
  double total_parameter_bytes() const;
  // Index of a node id, -1 when absent.
  int index_of(const std::string& id) const;
};

// From an already pruned graph (planner::prune_inputs_and_getitem_sinks).
LayerCosts layer_costs_from_graph(const planner::LayerGraph& pruned, double profile_batch);
// Reads, parses and prunes a profile file (InputError on malformed input).
LayerCosts load_layer_costs(const std::string& path, double profile_batch);

}  // namespace harness::simulator
