// Summaries of a results folder: samples of every complete run, pooled per point, system and
// phase over ranks and repeats, described by harness::summarize. Built from the files alone,
// so `harness report` regenerates exactly what `harness run` wrote.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/statistics.h"
#include "harness/results/model_flops.h"
#include "harness/results/rank_memory.h"
#include "harness/results/run_manifest.h"

namespace harness {

struct ResultSamples;  // harness/results/report_samples.h

// One rank's samples file: "iteration,forward_ms,backward_ms,step_ms,iteration_ms" rows of the
// measured (post warm-up) iterations. InputError (FILE:LINE) for a header without
// iteration_ms, a file with no rows, a short row, or a value that is not a finite number >= 0.
std::map<std::string, std::vector<double>> read_sample_file(const std::filesystem::path& path);

struct SystemSummary {
  std::string name;
  long long complete_runs = 0;  // repeats whose every rank finished
  long long ranks = 0;
  std::map<std::string, SampleSummary> phases;  // empty when no run completed
  // Model FLOPs achieved and MFU (harness/results/model_flops.h): where the run has flops.json.
  std::optional<Utilisation> utilisation;
  // Tokens per second of the whole run, for a model that reads tokens (model_flops.h).
  std::optional<double> tokens_per_s;
  std::optional<double> tokens_per_s_per_rank() const {
    if (!tokens_per_s) return std::nullopt;
    return *tokens_per_s / double(ranks > 0 ? ranks : 1);
  }
  // What a rank held, the largest over ranks (harness/results/rank_memory.h).
  std::optional<RankMemory> memory;
};

struct PointSummary {
  ManifestPoint point;
  std::vector<SystemSummary> systems;  // in the manifest's order
};

struct RunSummary {
  Manifest manifest;
  std::vector<PointSummary> points;
};

RunSummary summarize_run_directory(const std::filesystem::path& run_directory);
// The same from samples already read (read_result_samples).
RunSummary summarize_samples(const ResultSamples& samples);

nlohmann::json summary_to_json(const RunSummary& summary);

}  // namespace harness
