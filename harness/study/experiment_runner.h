// `harness run` for train specs: expands the matrix, launches every run's ranks, collects
// their samples into a results folder and prints the comparison tables.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "harness/launch/launch_plan.h"
#include "harness/spec/spec.h"

namespace harness {

struct RunnerOptions {
  std::string executable;  // the rank program (harness-rank), started as "harness-rank worker ..."
  // This harness binary: `harness enter-machine` starts mpirun and Open MPI's daemons on
  // emulated machines (cluster.machines under --launcher mpirun).
  std::string harness_executable;
  bool dry_run = false;
  bool interactive = false;                         // progress line rewritten in place
  std::map<std::string, std::string> runtime_info;  // e.g. torch_version, from the worker side
  nlohmann::json blas;     // the BLAS the rank program loads (library, path)
  nlohmann::json machine;  // this machine's limits (harness/machine/machine_limits.h); null: none
  LauncherKind launcher =
      LauncherKind::local;       // who starts the ranks (harness/launch/launch_plan.h)
  std::vector<HostSlots> hosts;  // --hosts h1:8,h2:8 (mpirun, slurm, torchrun)
  bool print_launch = false;     // print each run's launch command, run nothing
  std::string resume_directory;  // --resume: finish this results folder instead of a new one
  // The model's layer names in chain order: pipeline plans (plan.json, plan: auto) name layers.
  std::function<std::vector<std::string>(const ModelConfig&)> model_layer_names;
  // Per-layer forward ms (`stages: N` balances them); unset: equal layer counts.
  std::function<std::vector<double>(const ModelConfig&)> model_layer_costs;
  // Per-layer forward FLOPs per sample: each run's flops.json, for MFU; unset: none written.
  std::function<std::vector<double>(const ModelConfig&)> model_layer_flops;
};

// Whether a run of `system` has its model FLOPs counted (flops.json, GFLOP/s, MFU): every kind
// but an external one, whose command runs a model the harness cannot count.
bool counts_model_flops(const SystemConfig& system);

// The expanded matrix, one line per run, as --dry-run prints it.
std::string describe_matrix(const Experiment& experiment);

// Returns the process exit code: 0 all runs complete, 1 a run failed (finished points are
// kept; with run.on_failure: continue the study goes on first), 130 interrupted.
int run_experiment(const Experiment& experiment, const RunnerOptions& options, std::ostream& out);

// Writes summary.json, table.md and table.csv of a results folder from its raw samples and
// returns the markdown tables.
std::string write_summary_files(const std::filesystem::path& run_directory);

}  // namespace harness
