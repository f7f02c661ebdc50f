// The layer graph of a PipeDream "graph.txt" profile, as written in the file, plus the pruning
// the planner applies before building antichains (zero-cost inputs, __getitem__ sinks).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace harness::planner {

struct LayerNode {
  std::string id;           // "node12"
  std::string description;  // "Conv2d_1_1", "Input0", ...
  double forward_ms = 0.0;  // for one profile batch
  double backward_ms = 0.0;
  double activation_bytes = 0.0;  // list-valued activations are summed
  double parameter_bytes = 0.0;
  std::optional<int> stage_id;
  int line = 0;  // 1-based line in the source file, for error messages
};

struct LayerGraph {
  std::string source;  // file name used in error messages
  std::vector<LayerNode> nodes;
  std::vector<std::vector<int>> successors;    // direct edges, in file order
  std::vector<std::vector<int>> predecessors;  // reverse of successors

  int size() const { return static_cast<int>(nodes.size()); }
};

// Parses the text of a profile; `source` names it in "source:line: what" errors (InputError).
LayerGraph parse_layer_graph(const std::string& text, const std::string& source);
// Reads and parses a file; an unreadable file is an InputError too.
LayerGraph read_layer_graph(const std::string& path);

// Drops sources whose description starts with "Input" and then sinks whose description starts
// with "__getitem__", renumbering the remaining nodes in their original order.
LayerGraph prune_inputs_and_getitem_sinks(const LayerGraph& graph);

// Node indices in a topological order (Kahn's algorithm, lowest index first); InputError on
// a cycle.
std::vector<int> topological_order(const LayerGraph& graph);

}  // namespace harness::planner
