#include "simulator/model_state_memory.h"

#include <algorithm>
#include <map>

namespace harness::simulator {

namespace {

constexpr double kAdamMoments = 2;

double stage_parameter_bytes(const LayerCosts& costs, const PipelineStage& stage) {
  double bytes = 0;
  for (const int layer : stage.layers) bytes += costs.parameter_bytes.at(layer);
  return bytes;
}

}  // namespace

StateMemory replicated_states(double parameter_bytes) {
  return {parameter_bytes, parameter_bytes, kAdamMoments * parameter_bytes};
}

StateMemory pipeline_states(const LayerCosts& costs, const PipelineSystem& system, int zero_stage) {
  std::map<int, StateMemory> by_rank;
  for (const PipelineStage& stage : system.stages) {
    const double replicas = std::max<double>(1, double(stage.ranks.size()));
    const StateMemory whole = replicated_states(stage_parameter_bytes(costs, stage));
    StateMemory held = whole;
    if (zero_stage >= 1) held.optimizer_state_bytes /= replicas;
    if (zero_stage >= 2) held.gradient_bytes /= replicas;
    if (zero_stage >= 3) held.parameter_bytes /= replicas;
    for (const int rank : stage.ranks) {
      StateMemory& sum = by_rank[rank];
      sum.parameter_bytes += held.parameter_bytes;
      sum.gradient_bytes += held.gradient_bytes;
      sum.optimizer_state_bytes += held.optimizer_state_bytes;
    }
  }
  StateMemory fullest;
  for (const auto& [rank, memory] : by_rank) {
    if (memory.total() > fullest.total()) fullest = memory;
  }
  return fullest;
}

}  // namespace harness::simulator
