// Pipeline parallelism: stages of layers, each run data-parallel on its ranks (replicas split
// every micro-batch), micro-batches flowing forward through the stages and gradients back, the
// DAPPLE (1F1B: warm-up forwards, then one forward one backward, then the remaining backwards)
// or GPipe (all forwards, then all backwards) schedule, then every stage all-reduces its
// gradients over its replicas and steps. The execution model of the planner's plan.json.
#pragma once

#include <string>
#include <vector>

#include "runtime/pipeline/pipeline_schedule.h"
#include "simulator/cluster.h"
#include "simulator/layer_costs.h"
#include "simulator/system_result.h"

namespace harness::simulator {

// The runtime's schedules (runtime/pipeline/pipeline_schedule.h): a simulated stage runs exactly
// the order a real one does.
using PipelineSchedule = runtime::PipelineSchedule;

struct PipelineStage {
  std::vector<int> layers;  // layer indices (LayerCosts)
  std::vector<int> ranks;   // its replicas
};

struct PipelineSystem {
  std::vector<PipelineStage> stages;
  PipelineSchedule schedule = PipelineSchedule::kDapple;
  int micro_batches = 1;
  double global_batch = 1;  // samples per iteration over the whole pipeline
  double step_s = 0;        // the whole model's optimizer step; a stage runs its parameters' share
};

// Checks the stages against the profile and the world: every layer in exactly one stage, no
// edge from a later stage to an earlier one, ranks distinct and below `world`. Throws
// std::invalid_argument with the reason.
void validate_pipeline(const LayerCosts& costs, const PipelineSystem& system, int world);

// Bytes (at the profile batch) crossing the boundary after stage s: the output activations of
// layers in stages <= s that feed a layer in a later stage.
std::vector<double> boundary_bytes(const LayerCosts& costs, const PipelineSystem& system);

SimulatedIteration simulate_pipeline(const Cluster& cluster, const LayerCosts& costs,
                                     const PipelineSystem& system, int world, ComputeNoise& noise);

}  // namespace harness::simulator
