// The per-iteration samples of a results folder, pooled per point, system and phase the way
// summary.json pools them (every rank of every complete repeat, warm-up already excluded by
// the ranks). `harness compare` tests these samples and `harness plot` draws them.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "harness/results/run_manifest.h"

namespace harness {

// One phase's samples, phase -> ms.
using PhaseSamples = std::map<std::string, std::vector<double>>;

struct SystemSamples {
  std::string name;
  long long complete_runs = 0;
  PhaseSamples phases;  // pooled over ranks and complete repeats; empty when none completed
  // Per complete repeat (a run: one process per rank), its ranks' samples pooled: the unit of
  // replication a regression verdict rests on.
  std::vector<PhaseSamples> runs;
  nlohmann::json config;  // config.json of its first repeat (what the ranks were given); null
                          // when the folder has none
  nlohmann::json flops;   // flops.json of its first repeat (harness/results/model_flops.h); null
                          // for external systems and folders written before it existed
  // memory_rank<r>.json of its first repeat, the ranks that wrote one (harness/results/
  // rank_memory.h): DDP and expert-parallel ranks.
  std::vector<nlohmann::json> memory;
  nlohmann::json buckets;  // buckets.json of its first repeat (rank 0's bucket layout); null
                           // for systems without a bucketed reducer
};

struct PointSamples {
  ManifestPoint point;
  std::vector<SystemSamples> systems;  // in the manifest's order
};

struct ResultSamples {
  std::filesystem::path directory;
  Manifest manifest;
  nlohmann::json environment;  // env.json: the machine and revision it ran on; null when absent
  std::vector<PointSamples> points;
};

// Throws InputError when `directory` is not a results folder of `harness run`.
ResultSamples read_result_samples(const std::filesystem::path& directory);

// The value of the point's sweep coordinate `axis`, or "" when the point has none.
std::string coordinate(const ManifestPoint& point, const std::string& axis);

}  // namespace harness
