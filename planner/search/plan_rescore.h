// Scores a given plan on a (possibly different) profile and cost model: the noise study plans
// on noisy inputs and measures the chosen plan on the true ones.
#pragma once

#include "planner/model/model_profile.h"
#include "planner/search/cost_model.h"
#include "planner/search/pipeline_plan.h"
#include "planner/search/pipeline_timing.h"
#include "planner/search/training_setup.h"

namespace harness::planner {

// The bottleneck the search would have given `plan` under `profile` and `cost`: the slowest of
// each stage's compute over its GPUs and each boundary's transfer of the cut's output
// activations (twice -- forward and backward -- except compat's bipartition, which moves them
// once). The same expressions as the search, so an unchanged input gives the same bits.
double plan_bottleneck(const ModelProfile& profile, const CostModel& cost,
                       const PipelineCandidate& plan);

// The latency model's timing of `plan` at `global_batch`, its bottleneck recomputed first.
PipelineTiming rescore_plan(const ModelProfile& profile, const CostModel& cost,
                            const TrainingSetup& setup, const PipelineCandidate& plan,
                            int global_batch);

}  // namespace harness::planner
