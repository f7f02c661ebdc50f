// Results folders written by hand for the report, compare and plot tests: the layout of
// `harness run` (manifest.json, raw/<point>/<system>/rep0/rank<r>.csv, status.json,
// config.json) with samples the test chooses, so numbers can be checked exactly.
#pragma once

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/json_file.h"
#include "harness/emulation/link_quantities.h"
#include "harness/results/run_manifest.h"

namespace harness_test {

struct FixtureRun {
  std::string experiment = "fixture";
  std::vector<std::string> systems = {"overlap", "sync"};
  // Sweep axes in order (the last varies fastest), each a path and its values as text.
  std::vector<std::pair<std::string, std::vector<std::string>>> axes;
  long long world_size = 2;  // unless run.world_size is swept
  long long iterations = 10;
  long long repeats = 1;
  long long batch_size = 8;
  // iteration_ms of (point index, system index, rank, iteration); the phases are fractions.
  std::function<double(size_t, size_t, long long, long long)> sample =
      [](size_t point, size_t system, long long rank, long long iteration) {
        return 10.0 + static_cast<double>(point) + 2.0 * static_cast<double>(system) +
               0.1 * static_cast<double>(rank) + 0.01 * static_cast<double>(iteration);
      };
  // Each repeat's samples are `sample` times this: a run's own level (its process's placement,
  // clock, memory layout), shared by all its iterations.
  std::function<double(size_t point, size_t system, long long repeat)> run_scale =
      [](size_t, size_t, long long) { return 1.0; };
  nlohmann::json environment;  // env.json when not null
};

// Run levels drawn around 1 with relative spread `cv`, seeded: reproducible.
inline std::function<double(size_t, size_t, long long)> noisy_runs(double cv, unsigned seed) {
  auto engine = std::make_shared<std::mt19937>(seed);
  return [engine, cv](size_t, size_t, long long) {
    if (cv <= 0) return 1.0;
    std::normal_distribution<double> normal(1.0, cv);
    return normal(*engine);
  };
}

// Normally distributed samples around `mean` (relative spread `cv`), seeded: reproducible.
inline std::function<double(size_t, size_t, long long, long long)> noisy_samples(double mean,
                                                                                 double cv,
                                                                                 unsigned seed) {
  auto engine = std::make_shared<std::mt19937>(seed);
  return [engine, mean, cv](size_t, size_t, long long, long long) {
    std::normal_distribution<double> normal(mean, mean * cv);
    return normal(*engine);
  };
}

inline std::filesystem::path write_fixture_run(const std::filesystem::path& directory,
                                               const FixtureRun& spec) {
  namespace fs = std::filesystem;
  harness::Manifest manifest;
  manifest.experiment = spec.experiment;
  manifest.baseline = spec.systems.front();
  for (const auto& name : spec.systems) manifest.systems.push_back({name, "ddp", name});
  size_t total = 1;
  for (const auto& axis : spec.axes) total *= axis.second.size();
  for (size_t index = 0; index < total; ++index) {
    harness::ManifestPoint point;
    char id[32];
    std::snprintf(id, sizeof id, "p%03zu", index);
    point.id = id;
    point.world_size = spec.world_size;
    point.repeats = spec.repeats;
    point.iterations = spec.iterations;
    size_t rest = index;
    std::vector<std::pair<std::string, std::string>> coordinates(spec.axes.size());
    for (size_t a = spec.axes.size(); a-- > 0;) {
      coordinates[a] = {spec.axes[a].first, spec.axes[a].second[rest % spec.axes[a].second.size()]};
      rest /= spec.axes[a].second.size();
    }
    for (const auto& [axis, value] : coordinates) {
      point.label += (point.label.empty() ? "" : ", ") + axis + "=" + value;
      if (axis == "run.world_size") point.world_size = std::stoll(value);
      // Emulated machines: 2 of them, joined by a link of this rate.
      if (axis == "cluster.network.inter_machine.bandwidth") {
        point.machines = 2;
        point.inter_machine_bits_per_s = harness::parse_link_rate(value);
      }
    }
    if (point.label.empty()) point.label = "default";
    point.coordinates = coordinates;
    manifest.points.push_back(point);
  }
  harness::write_file_atomic(directory / "manifest.json",
                             harness::json_text(harness::manifest_to_json(manifest), 2) + "\n");
  if (!spec.environment.is_null()) {
    harness::write_file_atomic(directory / "env.json",
                               harness::json_text(spec.environment, 2) + "\n");
  }
  for (size_t p = 0; p < manifest.points.size(); ++p) {
    const auto& point = manifest.points[p];
    double bucket = 25;
    for (const auto& [axis, value] : point.coordinates) {
      if (axis == "ddp.bucket_mb") bucket = std::stod(value);
    }
    for (size_t s = 0; s < spec.systems.size(); ++s) {
      for (long long repeat = 0; repeat < spec.repeats; ++repeat) {
        const fs::path raw =
            harness::run_raw_directory(directory, point.id, spec.systems[s], repeat);
        harness::write_file_atomic(raw / "status.json", "{\"status\": \"complete\"}\n");
        nlohmann::json config = {{"model", {{"batch_size", spec.batch_size}}},
                                 {"system", {{"name", spec.systems[s]}, {"bucket_mb", bucket}}}};
        harness::write_file_atomic(raw / "config.json", harness::json_text(config, 2) + "\n");
        const double scale = spec.run_scale(p, s, repeat);
        for (long long r = 0; r < point.world_size; ++r) {
          std::string csv = "iteration,forward_ms,backward_ms,step_ms,iteration_ms\n";
          for (long long i = 0; i < spec.iterations; ++i) {
            const double total = scale * spec.sample(p, s, r, i);
            char row[160];
            std::snprintf(row, sizeof row, "%lld,%.6f,%.6f,%.6f,%.6f\n", i, 0.3 * total,
                          0.5 * total, 0.1 * total, total);
            csv += row;
          }
          harness::write_file_atomic(raw / ("rank" + std::to_string(r) + ".csv"), csv);
        }
      }
    }
  }
  return directory;
}

}  // namespace harness_test
