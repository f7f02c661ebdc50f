// Plans a sweep of global batch sizes: the three data-parallel estimates and the best hybrid
// plan for each, batch sizes and searches spread over a thread pool.
#pragma once

#include <optional>
#include <vector>

#include "planner/model/model_profile.h"
#include "planner/search/cost_model.h"
#include "planner/search/data_parallel.h"
#include "planner/search/pipeline_plan.h"
#include "planner/search/pipeline_timing.h"
#include "planner/search/training_setup.h"

namespace harness::planner {

struct PlannerOptions {
  PlannerMode mode = PlannerMode::kDapple;
  TrainingSetup setup;
  Devices devices;
  // dapple's bandwidths and GPU memory; compat always uses the published constants.
  Topology topology = Topology::published_constants();
  // compat normally ignores `topology` and uses the published constants; the noise study sets
  // this to plan compat on perturbed constants.
  bool compat_uses_topology = false;
  std::vector<PlacementPolicy> policies{PlacementPolicy::kFreshFirst, PlacementPolicy::kAppendFirst,
                                        PlacementPolicy::kScatterFirst};
  int threads = 1;
  // The straightforward search (every cell, two-stage candidates materialised): slow, for
  // tests that check the default search returns the same results.
  bool exhaustive_search = false;
};

struct BatchPlan {
  int global_batch = 0;
  DataParallelEstimates data_parallel;
  double best_hybrid = 0.0;  // speedup of `plan`; 0 when there is none
  std::optional<PipelineCandidate> plan;
  PipelineTiming timing;  // of `plan`
  int candidates_considered = 0;
  int candidates_over_memory = 0;  // dapple: rejected by the exact memory check
};

struct SweepResult {
  std::vector<BatchPlan> batches;  // in the order of the requested sizes
};

// The cost model a mode uses: compat ignores the topology's numbers.
CostModel make_cost_model(const PlannerOptions& options);

SweepResult plan_sweep(const ModelProfile& profile, const PlannerOptions& options,
                       const std::vector<int>& global_batches);

}  // namespace harness::planner
