// HiDup's profiled compute for the SPMD search (`compute: measured` on a `kind: spmd` system):
// every operator timed alone under each of its signatures at the point's shapes by the rank
// program (`harness-rank spmd-times`, runtime/profile/spmd_operator_times.h), one rank's part,
// and set on the graph so that the search prices compute by those times, not by FLOPs.
#pragma once

#include <filesystem>
#include <string>

#include "harness/spec/spec.h"
#include "harness/study/spmd_search_run.h"
#include "planner/spmd/operator_graph.h"
#include "planner/spmd/spmd_costs.h"

namespace harness {

// What the ranks of a point run: the model, its optimizer, the global batch, a rank's threads,
// and how many ranks share this machine's cores (timed as that many processes in lockstep).
struct SpmdComputeRun {
  ModelConfig model;
  OptimizerConfig optimizer;
  long long batch = 0;
  long long threads = 1;
  long long co_located = 1;
};

// The search's timer for the run (run_spmd_search): it times every signature of every operator
// of the graph, one rank's part, and the optimizer's step per parameter byte with the rank
// program `executable`; sets each Signature::measured_compute_s and the costs'
// step_seconds_per_parameter_byte, and writes the plans the rank program timed and the times
// (spmd_compute.json) into `folder`.
ComputeTimer measured_compute_timer(SpmdComputeRun run, std::string executable,
                                    std::filesystem::path folder);

}  // namespace harness
