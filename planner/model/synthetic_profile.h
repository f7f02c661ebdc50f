// Synthetic layer chains for the planning-time study (issue 3): deterministic from a seed, so
// benchmarks and tests plan exactly the same model on every machine.
#pragma once

#include <cstdint>

#include "planner/model/model_profile.h"
#include "planner/model/profile_graph.h"

namespace harness::planner {

struct SyntheticChainOptions {
  int layers = 16;
  std::uint64_t seed = 1;
  // Per layer, uniform in [min, max): forward time (ms, backward is 1x..2x of it), output
  // activation and parameter bytes -- roughly a mid-size CNN/transformer layer at batch 32.
  double min_forward_ms = 0.5, max_forward_ms = 5.0;
  double min_activation_bytes = 1e6, max_activation_bytes = 50e6;
  double min_parameter_bytes = 0.0, max_parameter_bytes = 20e6;
};

// A chain node1 -> node2 -> ... -> nodeL (no input node), named "synthetic-chain-L-sS".
LayerGraph synthetic_chain_graph(const SyntheticChainOptions& options);
ModelProfile synthetic_chain_profile(const SyntheticChainOptions& options);

}  // namespace harness::planner
