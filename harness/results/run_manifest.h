// manifest.json: what a results folder holds (experiment, systems, points, baseline), written
// when a run starts so that summaries and tables can be rebuilt from the folder alone.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace harness {

struct Experiment;

inline constexpr const char* kPhases[] = {"forward", "backward", "step", "iteration"};

struct ManifestSystem {
  std::string name;
  std::string kind;
  std::string mode;
};

struct ManifestPoint {
  std::string id;
  std::string label;
  std::vector<std::pair<std::string, std::string>> coordinates;
  long long world_size = 0;
  long long repeats = 0;
  long long iterations = 0;
  long long warmup = 0;
  // The machines the ranks ran on: 1 (this host's loopback), or emulated ones joined by a link
  // of this rate (none: unshaped).
  long long machines = 1;
  std::optional<double> inter_machine_bits_per_s;
};

struct Manifest {
  std::string experiment;
  std::string baseline;
  std::vector<ManifestSystem> systems;
  std::vector<ManifestPoint> points;
};

Manifest make_manifest(const Experiment& experiment);
nlohmann::json manifest_to_json(const Manifest& manifest);
// The manifest `json` says, every field checked (types, the limits a spec has, names that can
// name folders, a baseline among the systems); InputError "FILE: FIELD: why" otherwise.
Manifest manifest_from_json(const nlohmann::json& json, const std::string& file);
// The folder's manifest.json, read as above.
Manifest read_manifest(const std::filesystem::path& run_directory);

// Folder of one run (a point, a system, a repeat) inside a results folder.
std::filesystem::path run_raw_directory(const std::filesystem::path& run_directory,
                                        const std::string& point_id, const std::string& system,
                                        long long repeat);

}  // namespace harness
