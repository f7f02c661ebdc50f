// PipeDream's antichain DAG: every state is an augmented antichain of the layer graph, and a
// pipeline stage boundary can only fall between a state and one of its descendants.
#pragma once

#include <vector>

#include "planner/model/node_set.h"
#include "planner/model/profile_graph.h"

namespace harness::planner {

struct AntichainState {
  std::vector<int> antichain;            // the antichain itself (node indices)
  std::vector<int> augmented_antichain;  // plus the predecessors whose outputs are still live
  NodeSet downset;                       // every node up to and including the antichain
  std::vector<int> successors;           // direct edges of the antichain DAG (state indices)
};

struct AntichainDag {
  std::vector<AntichainState> states;       // topologically ordered
  std::vector<std::vector<int>> ancestors;  // all ancestors of each state, ascending
};

// Builds the DAG from the first source of `graph` (a pruned graph). States are numbered in a
// topological order that is deterministic: Kahn's algorithm, earliest discovered state first.
AntichainDag build_antichain_dag(const LayerGraph& graph);

}  // namespace harness::planner
