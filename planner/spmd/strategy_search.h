// The search for the cheapest strategy (one signature per operator) under spmd_costs.h's model.
// A dynamic program over the graph's cuts, as HiDup's: operators are taken in topological
// order, and a state is the signatures chosen for the operators whose outputs are still to be
// read (the cut's frontier); every cost term depends only on an operator's own signature and
// those of its producers, so keeping the cheapest path into each state is exact. Its work grows
// with the signatures to the power of the frontier's width (2 or 3 in a transformer, whose
// residual stream is the only long edge), not with the graph's length: why a DP over cuts and
// not an ILP as Alpa's (no solver, and the transformer's cuts are narrow). Ties keep the
// lower-numbered signatures.
#pragma once

#include <cstdint>

#include "planner/spmd/operator_graph.h"
#include "planner/spmd/spmd_costs.h"

namespace harness::spmd {

struct SearchResult {
  Strategy strategy;
  double seconds = 0;
  int64_t states = 0;       // states the program kept, summed over its steps
  int widest_frontier = 0;  // operators in the widest cut
};

// Throws std::invalid_argument for a malformed graph (check_graph) or one whose cut would keep
// more than `max_states` states in one step.
SearchResult search_strategy(const OperatorGraph& graph, const SpmdCosts& costs,
                             int64_t max_states = 1 << 20);

// Every strategy tried, for graphs small enough (at most `max_strategies` of them, else
// std::invalid_argument): the check the dynamic program is held to.
SearchResult enumerate_strategies(const OperatorGraph& graph, const SpmdCosts& costs,
                                  int64_t max_strategies = 1 << 24);

}  // namespace harness::spmd
