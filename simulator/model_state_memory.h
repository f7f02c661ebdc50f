// The model states a simulated rank holds: its parameters and gradients (float32, as the
// profiles count parameter bytes) and AdamW's two moments, the most any rank holds. What every
// system's config.json records as memory_per_rank, so that a study can tell a configuration
// that is fast from one that fits (activations are not counted here).
#pragma once

#include "simulator/layer_costs.h"
#include "simulator/pipeline_system.h"

namespace harness::simulator {

struct StateMemory {
  double parameter_bytes = 0;
  double gradient_bytes = 0;
  double optimizer_state_bytes = 0;  // AdamW: two moments of each parameter
  double total() const { return parameter_bytes + gradient_bytes + optimizer_state_bytes; }
};

// Every parameter of `parameter_bytes` on the rank: DDP's replicas, a tensor slice's.
StateMemory replicated_states(double parameter_bytes);

// The fullest tensor group's (or rank's) stages; with `zero_stage` 1, 2 or 3 the optimizer
// states, then the gradients, then the parameters divided over the stage's replicas.
StateMemory pipeline_states(const LayerCosts& costs, const PipelineSystem& system, int zero_stage);

}  // namespace harness::simulator
