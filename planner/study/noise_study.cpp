#include "planner/study/noise_study.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "planner/search/plan_rescore.h"
#include "planner/study/profile_noise.h"

namespace harness::planner {

bool same_plan(const PipelineCandidate& a, const PipelineCandidate& b) {
  if (a.gpus_per_unit != b.gpus_per_unit || a.stages.size() != b.stages.size()) return false;
  for (std::size_t s = 0; s < a.stages.size(); ++s) {
    const PlannedStage& x = a.stages[s];
    const PlannedStage& y = b.stages[s];
    if (x.first_state != y.first_state || x.last_state != y.last_state || x.units != y.units ||
        x.gpus.ids != y.gpus.ids) {
      return false;
    }
  }
  return true;
}

NoiseStudy run_noise_study(const ModelProfile& profile, const PlannerOptions& options,
                           const std::vector<int>& global_batches, const SweepResult& truth,
                           const NoiseSettings& settings) {
  if (truth.batches.size() != global_batches.size()) {
    throw std::invalid_argument("the true sweep does not match the batch sizes");
  }
  if (settings.seeds < 1) throw std::invalid_argument("the noise study needs a seed");
  const CostModel true_cost = make_cost_model(options);

  NoiseStudy study;
  study.settings = settings;
  study.batches.resize(global_batches.size());
  for (std::size_t b = 0; b < global_batches.size(); ++b) {
    NoisyBatch& out = study.batches[b];
    out.global_batch = global_batches[b];
    out.true_plan = truth.batches[b].plan;
    // Re-scored like the noisy plans, so zero noise gives a ratio of exactly 1.
    if (out.true_plan) {
      out.true_best =
          rescore_plan(profile, true_cost, options.setup, *out.true_plan, out.global_batch).speedup;
    }
  }

  for (int i = 0; i < settings.seeds; ++i) {
    const std::uint64_t seed = settings.first_seed + static_cast<std::uint64_t>(i);
    const ModelProfile noisy_profile = perturb_compute(profile, settings.compute_fraction, seed);
    PlannerOptions noisy = options;
    // The bandwidths the true run uses (compat: the published ones), perturbed.
    noisy.topology = perturb_bandwidth(true_cost.topology(), settings.bandwidth_fraction, seed);
    noisy.compat_uses_topology = true;
    const SweepResult sweep = plan_sweep(noisy_profile, noisy, global_batches);
    for (std::size_t b = 0; b < global_batches.size(); ++b) {
      NoisyBatch& out = study.batches[b];
      NoisySeed result;
      result.seed = seed;
      result.plan = sweep.batches[b].plan;
      result.noisy_speedup = sweep.batches[b].best_hybrid;
      if (result.plan) {
        result.true_speedup =
            rescore_plan(profile, true_cost, options.setup, *result.plan, out.global_batch).speedup;
      }
      result.ratio = out.true_best > 0.0 ? result.true_speedup / out.true_best
                                         : std::numeric_limits<double>::quiet_NaN();
      const bool changed = result.plan.has_value() != out.true_plan.has_value() ||
                           (result.plan && !same_plan(*result.plan, *out.true_plan));
      out.plans_changed += changed;
      out.seeds.push_back(std::move(result));
    }
  }

  for (NoisyBatch& out : study.batches) {
    double sum = 0.0;
    out.min_ratio = std::numeric_limits<double>::infinity();
    out.max_ratio = -std::numeric_limits<double>::infinity();
    for (const NoisySeed& s : out.seeds) {
      sum += s.ratio;
      out.min_ratio = std::min(out.min_ratio, s.ratio);
      out.max_ratio = std::max(out.max_ratio, s.ratio);
    }
    out.mean_ratio = sum / static_cast<double>(out.seeds.size());
    if (!(out.true_best > 0.0)) {
      out.min_ratio = out.max_ratio = out.mean_ratio = std::numeric_limits<double>::quiet_NaN();
    }
  }
  return study;
}

}  // namespace harness::planner
