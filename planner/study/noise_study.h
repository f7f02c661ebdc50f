// Sensitivity of the chosen plan to profile noise (issue 3): plan on a profile whose compute
// times carry +-x% noise per layer and a topology whose bandwidths carry +-y%, then score the
// chosen plan on the true inputs and compare with the plan chosen on the true inputs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "planner/model/model_profile.h"
#include "planner/search/pipeline_plan.h"
#include "planner/search/planner.h"

namespace harness::planner {

struct NoiseSettings {
  double compute_fraction = 0.0;    // 0.1 is +-10% per layer
  double bandwidth_fraction = 0.0;  // 0.2 is +-20% per bandwidth
  int seeds = 10;                   // seeds first_seed .. first_seed + seeds - 1
  std::uint64_t first_seed = 1;
};

struct NoisySeed {
  std::uint64_t seed = 0;
  std::optional<PipelineCandidate> plan;  // chosen on the noisy inputs
  double noisy_speedup = 0.0;             // as the noisy planner predicted it
  double true_speedup = 0.0;              // the same plan on the true inputs
  double ratio = 0.0;                     // true_speedup / the true best's speedup
};

struct NoisyBatch {
  int global_batch = 0;
  std::optional<PipelineCandidate> true_plan;
  double true_best = 0.0;  // speedup of true_plan, re-scored as the noisy plans are
  std::vector<NoisySeed> seeds;
  // Over the seeds; ratios are 0 for a seed whose noisy planner found no plan. NaN when the
  // true inputs have no plan or one of speedup 0 (compat keeps plans without micro-batches).
  double mean_ratio = 0.0, min_ratio = 0.0, max_ratio = 0.0;
  int plans_changed = 0;  // seeds whose plan differs from true_plan (stages or GPUs)
};

struct NoiseStudy {
  NoiseSettings settings;
  std::vector<NoisyBatch> batches;
};

// `truth` is plan_sweep(profile, options, global_batches). compat mode perturbs the published
// constants it always uses. Deterministic: the same settings give the same numbers for any
// options.threads.
NoiseStudy run_noise_study(const ModelProfile& profile, const PlannerOptions& options,
                           const std::vector<int>& global_batches, const SweepResult& truth,
                           const NoiseSettings& settings);

// Whether two plans run the same stages on the same GPUs.
bool same_plan(const PipelineCandidate& a, const PipelineCandidate& b);

}  // namespace harness::planner
