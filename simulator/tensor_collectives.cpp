#include "simulator/tensor_collectives.h"

#include <string>

namespace harness::simulator {

std::vector<bool> split_layers(const LayerCosts& costs) {
  std::vector<bool> split;
  for (const std::string& name : costs.names) {
    split.push_back(name.rfind("DecoderLayer", 0) == 0 || name.rfind("EncoderLayer", 0) == 0);
  }
  return split;
}

SplitBlocks::SplitBlocks(const LayerCosts& costs)
    : split(split_layers(costs)), index(static_cast<size_t>(costs.size()), -1) {
  int blocks = 0;
  for (int layer : costs.order) {
    if (!split[layer]) continue;
    index[layer] = blocks++;
    if (first < 0) first = layer;
    last = layer;
  }
}

int add_megatron_pair(TaskGraph& graph, int group, double bytes, bool sequence_parallel) {
  int last = -1;
  for (int i = 0; i < 2; ++i) {
    if (!sequence_parallel) {
      last = graph.add_blocking_collective(group, bytes);
      continue;
    }
    graph.add_blocking_collective(group, bytes, TaskCategory::kAllGather);
    last = graph.add_blocking_collective(group, bytes, TaskCategory::kReduceScatter);
  }
  return last;
}

int add_split_forward(TaskGraph& graph, int group, double bytes, const SplitBlockComm& comm,
                      bool last_split) {
  const int pair = add_megatron_pair(graph, group, bytes, comm.sequence_parallel);
  if (!comm.sequence_parallel || !last_split) return pair;
  return graph.add_blocking_collective(group, bytes, TaskCategory::kAllGather);
}

int add_split_backward_input(TaskGraph& graph, int group, double bytes, const SplitBlockComm& comm,
                             bool first_split) {
  for (int i = 0; comm.sequence_parallel && comm.recompute_gather && i < 2; ++i) {
    graph.add_blocking_collective(group, bytes, TaskCategory::kAllGather);
  }
  const int pair = add_megatron_pair(graph, group, bytes, comm.sequence_parallel);
  if (!comm.sequence_parallel || !first_split) return pair;
  return graph.add_blocking_collective(group, bytes, TaskCategory::kAllGather);
}

int add_split_backward_weight(TaskGraph& graph, int group, const SplitBlockComm& comm) {
  int last = -1;
  for (int v = 0; comm.sequence_parallel && v < comm.partial_vectors; ++v) {
    last = graph.add_blocking_collective(group, comm.partial_bytes);
  }
  return last;
}

}  // namespace harness::simulator
