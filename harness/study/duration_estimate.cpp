#include "harness/study/duration_estimate.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/atomic_file.h"
#include "common/json_file.h"
#include "harness/results/model_flops.h"
#include "harness/results/run_manifest.h"
#include "harness/study/experiment_runner.h"
#include "harness/study/progress_display.h"

namespace harness {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A launch of the ranks before their first iteration: LibTorch loaded, the process group made.
// A floor, not a measurement: a fresh process on this class of machine takes about this long.
constexpr double kLaunchFloorSeconds = 0.5;

// The run's time in the previous folder: elapsed_s of its complete status.json.
std::optional<double> previous_seconds(const fs::path& previous, const PlannedRun& run) {
  if (previous.empty()) return std::nullopt;
  const fs::path status =
      run_raw_directory(previous, run.point->id, run.system->name, run.repeat) / "status.json";
  try {
    const json document = read_json_file(status);
    if (document.value("status", "") != "complete") return std::nullopt;
    const double seconds = document.value("elapsed_s", -1.0);
    if (seconds > 0) return seconds;
  } catch (const std::exception&) {
    // No such run, or a status it cannot read: estimated otherwise.
  }
  return std::nullopt;
}

// The time no run can beat: every rank's model FLOPs at its share of this machine's GEMM peak,
// all ranks' FLOPs at all of its cores when they share them, and a launch.
std::optional<double> flops_floor_seconds(const EstimateInputs& inputs, const PlannedRun& run) {
  if (inputs.machine.is_null() || !inputs.layer_flops || !counts_model_flops(*run.system)) {
    return std::nullopt;
  }
  const PointConfig& c = run.point->config;
  std::vector<double> layer_flops;
  try {
    layer_flops = inputs.layer_flops(c.model);
  } catch (const std::exception&) {
    return std::nullopt;  // a model the rank program could not count: not estimated
  }
  const std::vector<double> per_rank =
      rank_iteration_flops(layer_flops, c.model.batch_size, c.run.world_size, {});
  if (per_rank.empty()) return std::nullopt;
  const json env = {{"machine", inputs.machine},
                    {"device", c.run.device == "cuda" ? "cuda" : "cpu"},
                    {"world_size", c.run.world_size},
                    {"threads_per_rank", c.run.threads_per_rank}};
  const auto rank_peak = rank_peak_gflops(env, c.model.precision);
  if (!rank_peak || *rank_peak <= 0) return std::nullopt;
  const double slowest_rank = *std::max_element(per_rank.begin(), per_rank.end());
  double iteration_s = slowest_rank / (*rank_peak * 1e9);
  const json gemm = inputs.machine.value("gemm_" + c.model.precision, json());
  const double all_cores = gemm.is_object() ? gemm.value("gflops_all_cores", 0.0) : 0.0;
  if (c.run.device != "cuda" && all_cores > 0) {
    const double total = std::accumulate(per_rank.begin(), per_rank.end(), 0.0);
    iteration_s = std::max(iteration_s, total / (all_cores * 1e9));
  }
  return kLaunchFloorSeconds + static_cast<double>(c.run.warmup + c.run.iterations) * iteration_s;
}

}  // namespace

fs::path previous_results_of(const Experiment& experiment) {
  const fs::path parent = fs::path(experiment.output) / experiment.name;
  std::error_code error;
  if (!fs::is_directory(parent, error)) return {};
  YAML::Emitter emitted;
  emitted << experiment.resolved;
  const std::string spec = std::string(emitted.c_str()) + "\n";
  std::vector<fs::path> folders;
  for (const auto& entry : fs::directory_iterator(parent, error)) {
    if (entry.is_directory()) folders.push_back(entry.path());
  }
  std::sort(folders.rbegin(), folders.rend());  // UTC stamps: newest first
  for (const fs::path& folder : folders) {
    const auto text = read_input_file(folder / "spec.yaml");
    if (text && *text == spec) return folder;
  }
  return {};
}

DurationEstimate estimate_duration(const std::vector<PlannedRun>& runs,
                                   const EstimateInputs& inputs) {
  DurationEstimate estimate;
  estimate.runs = runs.size();
  estimate.previous = inputs.previous;
  for (const PlannedRun& run : runs) {
    if (const auto seconds = previous_seconds(inputs.previous, run)) {
      estimate.seconds += *seconds;
      ++estimate.from_previous;
    } else if (const auto floor = flops_floor_seconds(inputs, run)) {
      estimate.seconds += *floor;
      ++estimate.from_flops;
    } else {
      ++estimate.unknown;
    }
  }
  return estimate;
}

DurationEstimate estimate_study(
    const Experiment& experiment, const std::vector<PlannedRun>& runs, const json& machine,
    const std::function<std::vector<double>(const ModelConfig&)>& layer_flops) {
  return estimate_duration(runs, {machine, layer_flops, previous_results_of(experiment)});
}

std::string describe_estimate(const DurationEstimate& estimate) {
  if (estimate.from_previous + estimate.from_flops == 0) return "";
  std::string text = std::string("expected duration: ") +
                     (estimate.lower_bound() ? "at least " : "about ") +
                     format_duration(estimate.seconds) + " (";
  std::vector<std::string> parts;
  const std::string of = " of " + std::to_string(estimate.runs) + " runs ";
  if (estimate.from_previous > 0) {
    parts.push_back(std::to_string(estimate.from_previous) + of + "as long as in " +
                    estimate.previous.string());
  }
  if (estimate.from_flops > 0) {
    parts.push_back(std::to_string(estimate.from_flops) + of +
                    "bounded by their model FLOPs at this machine's GEMM peak");
  }
  if (estimate.unknown > 0) {
    parts.push_back(std::to_string(estimate.unknown) + of + "not estimated");
  }
  for (size_t i = 0; i < parts.size(); ++i) text += (i ? "; " : "") + parts[i];
  return text + ")";
}

}  // namespace harness
