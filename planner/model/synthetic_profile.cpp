#include "planner/model/synthetic_profile.h"

#include <stdexcept>
#include <string>

#include "common/seeded_random.h"

namespace harness::planner {

LayerGraph synthetic_chain_graph(const SyntheticChainOptions& options) {
  if (options.layers < 1) throw std::invalid_argument("a synthetic chain needs a layer");
  SeededRandom random(options.seed);
  LayerGraph graph;
  graph.source =
      "synthetic-chain-" + std::to_string(options.layers) + "-s" + std::to_string(options.seed);
  graph.nodes.resize(options.layers);
  graph.successors.resize(options.layers);
  graph.predecessors.resize(options.layers);
  for (int i = 0; i < options.layers; ++i) {
    LayerNode& node = graph.nodes[i];
    node.id = "node" + std::to_string(i + 1);
    node.description = "Layer" + std::to_string(i + 1);
    // Draw order is fixed (forward, backward ratio, activation, parameters) for reproducibility.
    node.forward_ms = random.uniform(options.min_forward_ms, options.max_forward_ms);
    node.backward_ms = node.forward_ms * random.uniform(1.0, 2.0);
    node.activation_bytes =
        random.uniform(options.min_activation_bytes, options.max_activation_bytes);
    node.parameter_bytes = random.uniform(options.min_parameter_bytes, options.max_parameter_bytes);
    node.line = i + 1;
    if (i > 0) {
      graph.successors[i - 1].push_back(i);
      graph.predecessors[i].push_back(i - 1);
    }
  }
  return graph;
}

ModelProfile synthetic_chain_profile(const SyntheticChainOptions& options) {
  return prepare_model_profile(synthetic_chain_graph(options));
}

}  // namespace harness::planner
