// A pipeline plan: consecutive ranges of antichain states, each run data-parallel on a GPU set.
#pragma once

#include <string>
#include <vector>

#include "planner/cluster/devices.h"

namespace harness::planner {

struct PlannedStage {
  int first_state = 0;  // inclusive range of antichain states
  int last_state = 0;
  int units = 1;  // replication units of the stage (GPUs per pipeline copy)
  GpuSet gpus;    // units x gpus_per_unit GPUs
};

enum class PlanKind { kSearch, kStraight, kBipartition };
const char* to_string(PlanKind kind);

struct PipelineCandidate {
  PlanKind kind = PlanKind::kSearch;
  int units_total = 0;    // replication units in the plan ("stage count" i of the search)
  int gpus_per_unit = 1;  // rp = n / i: copies of the whole pipeline
  // Slowest of stage compute and stage-boundary transfer, for one profile batch.
  double bottleneck_s = 0.0;
  std::vector<PlannedStage> stages;
};

// "[0..19]x15 [20..24]x1": state ranges and GPUs per stage.
std::string describe_stages(const PipelineCandidate& plan);

}  // namespace harness::planner
