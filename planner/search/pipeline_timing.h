// The published planner's pipeline latency model: warm-up, steady phase and drain with the
// bottleneck stage as pivot, plus the part of each stage's gradient all-reduce that the later
// stages' remaining micro-batches cannot hide.
#pragma once

#include <vector>

#include "planner/model/model_profile.h"
#include "planner/search/cost_model.h"
#include "planner/search/pipeline_plan.h"
#include "planner/search/training_setup.h"

namespace harness::planner {

// The gbs-independent quantities of a plan; every time in them is for one profile batch and
// scales linearly with the global batch, except the all-reduce times.
struct PlanShape {
  int gpus_per_unit = 1;
  double bottleneck_s = 0.0;
  double boundary_transfer_s = 0.0;        // sum over stage boundaries of moving OA once
  std::vector<double> stage_compute_s;     // whole profile batch, one GPU
  std::vector<double> stage_all_reduce_s;  // gradients of the stage over its GPUs
  std::vector<double> stage_parameter_bytes;
  std::vector<double> stage_activation_bytes;  // one profile batch
  std::vector<int> stage_units;
};

// compat charges a non-last stage the parameters up to the next stage's first state (the
// published off-by-one); dapple charges exactly its own states.
PlanShape shape_of(const ModelProfile& profile, const CostModel& cost,
                   const PipelineCandidate& plan);

// A stage by reference, so that candidates streamed by the sweep need not copy GPU sets.
struct StageView {
  int first_state = 0;
  int last_state = 0;
  int units = 1;
  const GpuSet* gpus = nullptr;
};
// shape_of on views, refilling `shape` (its vectors keep their storage between calls).
void fill_shape(const ModelProfile& profile, const CostModel& cost, int gpus_per_unit,
                double bottleneck_s, const std::vector<StageView>& stages, PlanShape& shape);

struct StageTiming {
  double compute_s = 0.0;     // per iteration, per GPU
  double all_reduce_s = 0.0;  // per iteration
  int in_flight = 0;          // micro-batches held under early-backward scheduling
  double memory_bytes = 0.0;  // per GPU
};

struct PipelineTiming {
  int micro_batches = 0;  // M = gbs / rp / micro-batch size
  double iteration_s = 0.0;
  double speedup = 0.0;  // over one GPU; 0 when M is 0
  bool fits_memory = true;
  std::vector<StageTiming> stages;
};

PipelineTiming time_pipeline(const PlanShape& shape, double total_compute_s_per_profile_batch,
                             int global_batch, const TrainingSetup& setup, double gpu_memory_bytes);

}  // namespace harness::planner
