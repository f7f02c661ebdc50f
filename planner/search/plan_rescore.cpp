#include "planner/search/plan_rescore.h"

#include <algorithm>

namespace harness::planner {

double plan_bottleneck(const ModelProfile& profile, const CostModel& cost,
                       const PipelineCandidate& plan) {
  const double activation_factor =
      plan.kind == PlanKind::kBipartition && cost.mode() == PlannerMode::kCompat ? 1.0 : 2.0;
  double bottleneck = 0.0;
  for (std::size_t s = 0; s < plan.stages.size(); ++s) {
    const PlannedStage& stage = plan.stages[s];
    const double compute = profile.compute_s.at(stage.first_state, stage.last_state);
    bottleneck = std::max(bottleneck, std::max(compute, 0.0) / stage.gpus.size());
    if (s > 0) {
      const PlannedStage& before = plan.stages[s - 1];
      bottleneck = std::max(
          bottleneck,
          cost.transfer(before.gpus, stage.gpus,
                        activation_factor * profile.output_activation_bytes[before.last_state]));
    }
  }
  return bottleneck;
}

PipelineTiming rescore_plan(const ModelProfile& profile, const CostModel& cost,
                            const TrainingSetup& setup, const PipelineCandidate& plan,
                            int global_batch) {
  PipelineCandidate rescored = plan;
  rescored.bottleneck_s = plan_bottleneck(profile, cost, plan);
  return time_pipeline(shape_of(profile, cost, rescored), profile.compute_s.total(), global_batch,
                       setup, cost.topology().gpu_memory_bytes);
}

}  // namespace harness::planner
