// Hand-made layer costs for the simulator tests, and how many tasks of a kind an iteration has.
#pragma once

#include <numeric>

#include "simulator/cluster.h"
#include "simulator/layer_costs.h"
#include "simulator/system_result.h"

namespace harness::simulator::testing {

// A chain of `layers` identical layers (forward/backward seconds at profile batch 1).
inline LayerCosts chain(int layers, double forward_s, double backward_s,
                        double activation_bytes = 0, double parameter_bytes = 0) {
  LayerCosts costs;
  costs.source = "test-chain";
  costs.profile_batch = 1;
  for (int i = 0; i < layers; ++i) {
    costs.ids.push_back("node" + std::to_string(i));
    costs.names.push_back("layer" + std::to_string(i));
    costs.forward_s.push_back(forward_s);
    costs.backward_s.push_back(backward_s);
    costs.activation_bytes.push_back(activation_bytes);
    costs.parameter_bytes.push_back(parameter_bytes);
    costs.successors.push_back(i + 1 < layers ? std::vector<int>{i + 1} : std::vector<int>{});
  }
  costs.order.resize(layers);
  std::iota(costs.order.begin(), costs.order.end(), 0);
  return costs;
}

// A decoder's chain for a tensor axis to split: an embedding, 2 transformer blocks and a head,
// forward 1 ms and backward 2 ms each at profile batch 1, every output 10 MB.
inline LayerCosts two_block_decoder() {
  LayerCosts c = chain(4, 1e-3, 2e-3, 10e6, 0);
  c.names = {"Embedding(embed_tokens)", "DecoderLayer(layers.0)", "DecoderLayer(layers.1)",
             "Linear(lm_head)"};
  return c;
}

// One machine of `gpus` ranks whose links move 10 GB/s with no latency: the cluster the hand
// computations price collectives on.
inline ClusterConfig one_machine_at_10_gbps(int gpus) {
  ClusterConfig config;
  config.gpus_per_machine = {gpus};
  config.intra_bandwidth = 10e9;
  config.intra_latency_s = 0;
  return config;
}

// The iteration's tasks of `category`, on every rank.
inline int tasks_of(const SimulatedIteration& iteration, TaskCategory category) {
  int n = 0;
  for (const Task& task : iteration.graph.tasks()) n += task.category == category;
  return n;
}

}  // namespace harness::simulator::testing
