// The hybrid search: a dynamic program over (antichain state, replication units, GPU
// occupancy) minimising the bottleneck stage, plus the exhaustive two-stage bipartition.
#pragma once

#include <optional>
#include <vector>

#include "planner/model/model_profile.h"
#include "planner/search/cost_model.h"
#include "planner/search/pipeline_plan.h"

namespace harness::planner {

// dapple mode's per-stage memory check inside the search. The number of micro-batches a stage
// holds under early-backward scheduling (stages after it + 1) is not known while the program
// runs front to back; the replication units left bound it, capped by the micro-batch count.
struct StageMemoryLimit {
  double gpu_memory_bytes = 16e9;
  double optimizer_memory_scaling = 2.0;
  double micro_batch_over_profile_batch = 1.0;  // activation scaling of one micro-batch
  int in_flight_cap = 1;                        // micro-batches per iteration (M)
};

struct SearchRequest {
  // Run the straightforward program: no bound, no greedy pass, every cell visited. Tests
  // compare it with the default (pruned) search, which must return the same plans.
  bool exhaustive = false;
  int units = 2;          // replication units in the plan (i)
  int gpus_per_unit = 1;  // GPUs per unit (rp)
  bool straight = false;  // one unit per stage (the published planner's "straight" pipelines)
  // One stage of every state on all units, nothing else: what the published search keeps
  // when the units do not divide the GPUs (its first cells; no later stage finds a placement).
  bool single_stage = false;
  std::vector<PlacementPolicy> policies{PlacementPolicy::kFreshFirst, PlacementPolicy::kAppendFirst,
                                        PlacementPolicy::kScatterFirst};
  std::optional<StageMemoryLimit> memory;  // dapple only
};

// nullopt when no plan uses exactly `units` units (e.g. straight with more units than states).
// With a memory limit, `same_above_cap` (when given) receives the largest in-flight cap below
// the request's at which a stage the search turned down for memory would have fitted (0: none
// would at any cap): the search sees the same stages, and so returns the same plan, for every
// cap above it up to the request's. A sweep's batch sizes need caps 1..units; most share one
// search this way.
std::optional<PipelineCandidate> search_pipeline(const ModelProfile& profile, const CostModel& cost,
                                                 const SearchRequest& request,
                                                 int* same_above_cap = nullptr);

// The GPU sets of two-stage plans over all GPUs: index g (1..n-1) lists every (first stage of
// g GPUs, second stage of the rest) placement pair, in the published order.
struct GpuPair {
  GpuSet first, second;
};
std::vector<std::vector<GpuPair>> bipartition_gpu_pairs(
    const Devices& devices, const std::vector<PlacementPolicy>& policies);

// The bottleneck of the two-stage plan: states 0..split on pair.first, the rest on pair.second.
double bipartition_bottleneck(const ModelProfile& profile, const CostModel& cost, int split,
                              const GpuPair& pair, double activation_factor);
PipelineCandidate bipartition_candidate(const ModelProfile& profile, const CostModel& cost,
                                        int split, const GpuPair& pair, double activation_factor);

// Every two-stage plan over all GPUs: each split state, each first-stage GPU count, each
// placement -- materialised (the sweep streams them instead; tests use this list).
// `activation_factor` is the multiple of the cut's output activation transferred (1 in the
// published bipartition, 2 -- forward and backward -- in the search and in dapple).
std::vector<PipelineCandidate> bipartition_candidates(const ModelProfile& profile,
                                                      const CostModel& cost,
                                                      const std::vector<PlacementPolicy>& policies,
                                                      double activation_factor);

// Bytes one GPU of a stage needs: parameters x optimizer scaling plus the activations of the
// micro-batches it holds, a micro-batch split across the stage's `units` GPUs.
double stage_memory_bytes(const ModelProfile& profile, int first_state, int last_state, int units,
                          int in_flight, double optimizer_memory_scaling,
                          double micro_batch_over_profile_batch);

}  // namespace harness::planner
