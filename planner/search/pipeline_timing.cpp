#include "planner/search/pipeline_timing.h"

#include <algorithm>

#include "planner/search/pipeline_search.h"

namespace harness::planner {

PlanShape shape_of(const ModelProfile& profile, const CostModel& cost,
                   const PipelineCandidate& plan) {
  std::vector<StageView> views;
  views.reserve(plan.stages.size());
  for (const PlannedStage& stage : plan.stages) {
    views.push_back({stage.first_state, stage.last_state, stage.units, &stage.gpus});
  }
  PlanShape shape;
  fill_shape(profile, cost, plan.gpus_per_unit, plan.bottleneck_s, views, shape);
  return shape;
}

void fill_shape(const ModelProfile& profile, const CostModel& cost, int gpus_per_unit,
                double bottleneck_s, const std::vector<StageView>& stages_in, PlanShape& shape) {
  shape.gpus_per_unit = gpus_per_unit;
  shape.bottleneck_s = bottleneck_s;
  shape.boundary_transfer_s = 0.0;
  shape.stage_compute_s.clear();
  shape.stage_all_reduce_s.clear();
  shape.stage_parameter_bytes.clear();
  shape.stage_activation_bytes.clear();
  shape.stage_units.clear();
  const int stages = static_cast<int>(stages_in.size());
  for (int s = 0; s < stages; ++s) {
    const StageView& stage = stages_in[s];
    int parameter_end = stage.last_state;
    if (cost.mode() == PlannerMode::kCompat && s + 1 < stages) parameter_end += 1;
    const double parameters = profile.parameter_bytes.at(stage.first_state, parameter_end);
    shape.stage_compute_s.push_back(profile.compute_s.at(stage.first_state, stage.last_state));
    shape.stage_parameter_bytes.push_back(
        profile.parameter_bytes.at(stage.first_state, stage.last_state));
    shape.stage_activation_bytes.push_back(
        profile.activation_bytes.at(stage.first_state, stage.last_state));
    shape.stage_all_reduce_s.push_back(cost.all_reduce(*stage.gpus, parameters));
    shape.stage_units.push_back(stage.units);
    if (s + 1 < stages) {
      shape.boundary_transfer_s += cost.transfer(*stage.gpus, *stages_in[s + 1].gpus,
                                                 profile.output_activation_bytes[stage.last_state]);
    }
  }
}

PipelineTiming time_pipeline(const PlanShape& shape, double total_compute_s_per_profile_batch,
                             int global_batch, const TrainingSetup& setup,
                             double gpu_memory_bytes) {
  PipelineTiming timing;
  const int rp = shape.gpus_per_unit;
  const int micro = setup.effective_micro_batch();
  timing.micro_batches = global_batch / rp / micro;
  const int m = timing.micro_batches;
  const int stages = static_cast<int>(shape.stage_units.size());
  const double scale = static_cast<double>(global_batch) / setup.profile_batch_size;
  const double total = total_compute_s_per_profile_batch * scale;
  const double micro_over_profile = static_cast<double>(micro) / setup.profile_batch_size;

  timing.stages.resize(stages);
  for (int s = 0; s < stages; ++s) {
    StageTiming& st = timing.stages[s];
    st.compute_s = shape.stage_compute_s[s] * scale / (shape.stage_units[s] * rp);
    st.all_reduce_s = shape.stage_all_reduce_s[s];
    st.in_flight = std::min(stages - s, std::max(m, 1));
    st.memory_bytes =
        shape.stage_parameter_bytes[s] * setup.optimizer_memory_scaling +
        st.in_flight * shape.stage_activation_bytes[s] * micro_over_profile / shape.stage_units[s];
    timing.fits_memory = timing.fits_memory && st.memory_bytes <= gpu_memory_bytes;
  }
  if (m == 0) return timing;

  const double block = shape.bottleneck_s * scale / m;
  double length = block * (m - 1) + total / rp / m + shape.boundary_transfer_s * scale / rp / m;
  double delta = 0.0;
  for (int s = 0; s < stages; ++s) {
    delta = std::max(delta, shape.stage_all_reduce_s[s] - s * block);
  }
  timing.iteration_s = length + delta;
  timing.speedup = total / timing.iteration_s;
  return timing;
}

}  // namespace harness::planner
