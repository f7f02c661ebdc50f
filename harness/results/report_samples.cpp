#include "harness/results/report_samples.h"

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/json_file.h"
#include "harness/results/run_status.h"
#include "harness/results/run_summary.h"

namespace harness {

namespace fs = std::filesystem;
using nlohmann::json;

ResultSamples read_result_samples(const fs::path& directory) {
  if (!fs::is_directory(directory)) {
    throw InputError(directory.string() + ": no such results folder");
  }
  if (!fs::exists(directory / "manifest.json")) {
    throw InputError(directory.string() +
                     ": not a results folder of `harness run` (no manifest.json)");
  }
  ResultSamples result;
  result.directory = directory;
  result.manifest = read_manifest(directory);
  // The study's status is not needed for samples, but a corrupt one is a corrupt folder.
  read_study_status(directory);
  if (fs::exists(directory / "env.json")) {
    result.environment = read_json_file(directory / "env.json");
  }
  for (const auto& point : result.manifest.points) {
    PointSamples point_samples{point, {}};
    for (const auto& system : result.manifest.systems) {
      SystemSamples samples;
      samples.name = system.name;
      const fs::path first = run_raw_directory(directory, point.id, system.name, 0);
      if (fs::exists(first / "config.json")) {
        samples.config = read_json_file(first / "config.json");
      }
      if (fs::exists(first / "flops.json")) samples.flops = read_json_file(first / "flops.json");
      if (fs::exists(first / "buckets.json")) {
        samples.buckets = read_json_file(first / "buckets.json");
      }
      for (long long rank = 0; rank < point.world_size; ++rank) {
        const fs::path memory = first / ("memory_rank" + std::to_string(rank) + ".json");
        if (fs::exists(memory)) samples.memory.push_back(read_json_file(memory));
      }
      for (long long repeat = 0; repeat < point.repeats; ++repeat) {
        const fs::path raw = run_raw_directory(directory, point.id, system.name, repeat);
        if (read_run_outcome(raw) != RunOutcome::kComplete) continue;
        ++samples.complete_runs;
        PhaseSamples& run = samples.runs.emplace_back();
        for (long long rank = 0; rank < point.world_size; ++rank) {
          for (auto& [phase, values] :
               read_sample_file(raw / ("rank" + std::to_string(rank) + ".csv"))) {
            run[phase].insert(run[phase].end(), values.begin(), values.end());
            auto& pooled = samples.phases[phase];
            pooled.insert(pooled.end(), values.begin(), values.end());
          }
        }
      }
      point_samples.systems.push_back(std::move(samples));
    }
    result.points.push_back(std::move(point_samples));
  }
  return result;
}

std::string coordinate(const ManifestPoint& point, const std::string& axis) {
  for (const auto& [name, value] : point.coordinates) {
    if (name == axis) return value;
  }
  return "";
}

}  // namespace harness
