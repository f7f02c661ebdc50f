// One run of a study: a point of the sweep, a system and a repeat, with what the study decided
// for it (a pipeline's stages), and what follows from it alone: its description, its bucket
// cap, the worker config its ranks get.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "harness/spec/spec.h"
#include "harness/study/experiment_runner.h"
#include "runtime/protocol/worker_config.h"

namespace harness {

struct PlannedRun {
  const Point* point;
  const SystemConfig* system;
  long long repeat;
  std::vector<PipelineStageSpec> stages;  // pipeline systems: resolved for this point
  nlohmann::json spmd_operators;          // spmd systems: the strategy searched for this point
};

// Every run of the study in the order they run.
std::vector<PlannedRun> plan_runs(const Experiment& experiment);

// Stages of every pipeline run, from the spec, a plan file or the planner (`plan: auto`,
// whose outputs go to <directory>/plans/). One resolution per point and system. A point on
// emulated machines is planned with the topology `emulated_topology` gives it (if any).
void resolve_pipeline_runs(std::vector<PlannedRun>& runs, const std::filesystem::path& directory,
                           const RunnerOptions& options,
                           const std::function<std::string(const Point&)>& emulated_topology = {});

// The strategy of every spmd run: HiDup's search over the point's world size for its global
// batch, priced by the system's comm.json and GFLOP/s (or each operator's time, measured by the
// rank program, as many processes in lockstep as ranks share this machine under a local launch),
// its plan written to <directory>/plans/<system>/<point id>/spmd_plan.json (with
// spmd_compute.json where measured). One search per point and system.
void resolve_spmd_runs(std::vector<PlannedRun>& runs, const std::filesystem::path& directory,
                       const RunnerOptions& options);

// The bucket cap of the run's system: its own, else the point's ddp.bucket_mb.
double system_bucket_mb(const PlannedRun& run);

// "p000 ddp.bucket_mb=5 | overlap" (and "| repeat k" when there are repeats).
std::string describe_run(const PlannedRun& run);

// What the run's ranks are told (runtime/protocol/worker_config.h).
runtime::WorkerConfig worker_config(const PlannedRun& run);

}  // namespace harness
