// How long a study will take, said before it starts (--dry-run prints it; `run` gives notice of
// a study expected to take more than kLongStudySeconds). A run of this very spec measured before
// (the newest results folder whose spec.yaml is this spec as resolved) gives its own time; a run
// never measured is bounded below by its model FLOPs at this machine's measured GEMM peak
// (harness/results/model_flops.h), plus its launch. Neither is known for an external system.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/spec/spec.h"
#include "harness/study/planned_run.h"

namespace harness {

inline constexpr double kLongStudySeconds = 600;

struct DurationEstimate {
  double seconds = 0;              // over the runs that have an estimate
  size_t runs = 0;                 // runs planned
  size_t from_previous = 0;        // timed by the previous folder of this spec
  size_t from_flops = 0;           // bounded below by model FLOPs
  size_t unknown = 0;              // neither (external systems; no machine figures)
  std::filesystem::path previous;  // the folder the timed runs came from; empty: none
  bool lower_bound() const { return from_flops > 0 || unknown > 0; }
};

struct EstimateInputs {
  nlohmann::json machine;  // this machine's limits; null: no FLOPs bound
  // Per-layer forward FLOPs per sample; unset: no FLOPs bound.
  std::function<std::vector<double>(const ModelConfig&)> layer_flops;
  std::filesystem::path previous;  // a results folder of this spec; empty: none
};

// The newest folder under <output>/<name>/ whose spec.yaml is `experiment`'s resolved spec;
// empty when there is none.
std::filesystem::path previous_results_of(const Experiment& experiment);

DurationEstimate estimate_duration(const std::vector<PlannedRun>& runs,
                                   const EstimateInputs& inputs);

// The study's runs estimated with the newest results folder of this spec, if any.
DurationEstimate estimate_study(
    const Experiment& experiment, const std::vector<PlannedRun>& runs,
    const nlohmann::json& machine,
    const std::function<std::vector<double>(const ModelConfig&)>& layer_flops);

// "expected duration: at least 2h10m00s (4 of 12 runs timed by results/x/<stamp>, 8 bounded
// by model FLOPs at this machine's GEMM peak)"; "" where no run has an estimate.
std::string describe_estimate(const DurationEstimate& estimate);

}  // namespace harness
