// What a simulated rank holds, the most any rank of a system holds: its model states (float32
// parameters and gradients, as the profiles count parameter bytes, and AdamW's two moments) and,
// where the profile counts what each layer keeps for backward (LayerCosts::stored_bytes), the
// activations at their peak. What every system's config.json records as memory_per_rank, so
// that a study can tell a configuration that is fast from one that fits.
#pragma once

#include <optional>
#include <vector>

#include "simulator/layer_costs.h"
#include "simulator/pipeline_system.h"

namespace harness::simulator {

struct RankMemory {
  double parameter_bytes = 0;
  double gradient_bytes = 0;
  double optimizer_state_bytes = 0;        // AdamW: two moments of each parameter
  std::optional<double> activation_bytes;  // unset: the profile does not say
  double total() const {
    return parameter_bytes + gradient_bytes + optimizer_state_bytes + activation_bytes.value_or(0);
  }
};

// What `layers` keep for backward over `samples` (the profile's per-sample bytes scaled);
// unset where the profile does not say.
std::optional<double> stored_activations(const LayerCosts& costs, const std::vector<int>& layers,
                                         double samples);

// Every parameter on the rank and every layer's activations of `samples` with the largest
// backward working memory: DDP's replicas (their batch), a tensor slice (its group's batch).
RankMemory replicated_memory(const LayerCosts& costs, double samples);

// `held` with ZeRO's `zero_stage` over `replicas`: 1 divides the optimizer states, 2 the
// gradients too, 3 the parameters too (padding aside).
RankMemory sharded_over(RankMemory held, double replicas, int zero_stage);

// An expert-parallel rank (simulator/expert_system.h): the dense part's states as `zero_stage`
// shards them over the `world` ranks, a world's share of every mixture's experts whole, and a
// replica's activations at `samples`.
RankMemory expert_parallel_memory(const LayerCosts& costs, double samples, int world,
                                  int zero_stage);

// The fullest pipeline position: its stages' states (with `zero_stage` 1, 2 or 3 the optimizer
// states, then the gradients, then the parameters divided over each stage's replicas) and the
// most micro-batches' activations its schedule holds at once, stage by stage (a forward keeps
// them until the micro-batch's backward, or W after I).
RankMemory pipeline_memory(const LayerCosts& costs, const PipelineSystem& system, int zero_stage);

}  // namespace harness::simulator
