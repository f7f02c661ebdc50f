// `kind: external` systems: a training program the harness does not ship, run once per rank
// with a templated command, its per-iteration timings read back into the rank CSVs of the
// harness's own workers. Spec reading, requirement probes, per-rank commands and sample
// collection live here; experiment_runner.cpp calls them around launch_local.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/emulation/network_plan.h"
#include "harness/launch/local_launcher.h"
#include "harness/spec/spec.h"

namespace harness {

// Reads the keys of an external system's map (command, env, timings, requires) from the
// systems entry being read; errors carry file:line:column.
ExternalSystem read_external_system(MapReader& reader, const YAML::Node& entry,
                                    const SpecOrigin& origin);

// Placeholder names a template may use ("point.<path>" stands for every point path).
const std::vector<std::string>& external_placeholder_names();

// Runs the system's `requires:` probes (/bin/sh -c); the first one that fails gives the
// reason to skip the system, e.g. "`python3 -c 'import torch'` exited with code 1: ...".
std::optional<std::string> failed_requirement(const ExternalSystem& system);

// What one run of an external system launches.
struct ExternalLaunch {
  std::string executable;                           // the program, resolved on PATH
  std::vector<RankProcess> ranks;                   // arguments and environment per rank
  std::vector<std::vector<std::string>> commands;   // the full command per rank (config.json)
  std::vector<std::filesystem::path> timing_files;  // where each rank's timings are read
  std::optional<RankFailure> error;                 // the command cannot be run at all
};

struct ExternalRunContext {
  const PointConfig* point = nullptr;
  long long repeat = 0;
  std::filesystem::path raw;  // the run's raw folder ({output_dir})
  int master_port = 0;
  // The emulated machines the ranks run on (cluster.machines > 1); null: this host's loopback.
  const NetworkPlan* network = nullptr;
};

ExternalLaunch plan_external_launch(const ExternalSystem& system, const ExternalRunContext& run);

// Rank 0's command as a dry run shows it (the port and results folder are not known yet).
std::string preview_external_command(const ExternalSystem& system, const PointConfig& point,
                                     long long repeat);

// config.json of an external run: the rendered commands and how timings are read.
nlohmann::json external_run_config(const SystemConfig& system, const ExternalLaunch& launch);

// "after 1 of 4 samples in rank1.stdout": how far a rank that failed got, for its report
// ("" when its timings cannot be read yet, e.g. a trace written at exit).
std::string external_progress_note(const ExternalSystem& system, const ExternalRunContext& run,
                                   const ExternalLaunch& launch, int rank);

// After every rank exited 0: reads each rank's timings, checks them, writes rank<r>.csv.
// Returns the first rank whose timings are missing, short or malformed, as a failed rank;
// `details` gets per-run notes for status.json.
std::optional<RankFailure> collect_external_samples(const ExternalSystem& system,
                                                    const ExternalRunContext& run,
                                                    const ExternalLaunch& launch,
                                                    nlohmann::json& details);

}  // namespace harness
