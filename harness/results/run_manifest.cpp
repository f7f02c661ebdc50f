#include "harness/results/run_manifest.h"

#include <stdexcept>

#include "common/atomic_file.h"
#include "harness/spec/spec.h"

namespace harness {

namespace fs = std::filesystem;
using nlohmann::json;

Manifest make_manifest(const Experiment& experiment) {
  Manifest manifest;
  manifest.experiment = experiment.name;
  manifest.baseline = experiment.baseline;
  for (const auto& system : experiment.systems) {
    manifest.systems.push_back({system.name, to_string(system.kind), system.mode});
  }
  for (const auto& point : experiment.points) {
    manifest.points.push_back(
        {point.id, point.label, point.coordinates, point.config.run.world_size,
         point.config.run.repeats, point.config.run.iterations, point.config.run.warmup,
         point.config.cluster.machines, point.config.cluster.inter_machine.rate_bits_per_s});
  }
  return manifest;
}

json manifest_to_json(const Manifest& manifest) {
  json out;
  out["experiment"] = manifest.experiment;
  out["baseline"] = manifest.baseline;
  out["phases"] = std::vector<std::string>(std::begin(kPhases), std::end(kPhases));
  out["systems"] = json::array();
  for (const auto& system : manifest.systems) {
    out["systems"].push_back({{"name", system.name}, {"kind", system.kind}, {"mode", system.mode}});
  }
  out["points"] = json::array();
  for (const auto& point : manifest.points) {
    json coordinates = json::array();
    for (const auto& [axis, value] : point.coordinates) {
      coordinates.push_back({{"axis", axis}, {"value", value}});
    }
    json entry = {{"id", point.id},
                  {"label", point.label},
                  {"coordinates", coordinates},
                  {"world_size", point.world_size},
                  {"repeats", point.repeats},
                  {"iterations", point.iterations},
                  {"warmup", point.warmup}};
    if (point.machines > 1) {
      entry["cluster"] = {
          {"machines", point.machines},
          {"inter_machine_rate_bits_per_s",
           point.inter_machine_bits_per_s ? json(*point.inter_machine_bits_per_s) : json()}};
    }
    out["points"].push_back(std::move(entry));
  }
  return out;
}

Manifest manifest_from_json(const json& in) {
  Manifest manifest;
  manifest.experiment = in.at("experiment").get<std::string>();
  manifest.baseline = in.at("baseline").get<std::string>();
  for (const auto& system : in.at("systems")) {
    manifest.systems.push_back({system.at("name").get<std::string>(),
                                system.at("kind").get<std::string>(),
                                system.at("mode").get<std::string>()});
  }
  for (const auto& point : in.at("points")) {
    ManifestPoint p;
    p.id = point.at("id").get<std::string>();
    p.label = point.at("label").get<std::string>();
    for (const auto& c : point.at("coordinates")) {
      p.coordinates.emplace_back(c.at("axis").get<std::string>(), c.at("value").get<std::string>());
    }
    p.world_size = point.at("world_size").get<long long>();
    p.repeats = point.at("repeats").get<long long>();
    p.iterations = point.at("iterations").get<long long>();
    p.warmup = point.at("warmup").get<long long>();
    // Folders written before emulated machines existed have no "cluster": one machine.
    if (const auto cluster = point.find("cluster"); cluster != point.end()) {
      p.machines = cluster->at("machines").get<long long>();
      const json& rate = cluster->at("inter_machine_rate_bits_per_s");
      if (!rate.is_null()) p.inter_machine_bits_per_s = rate.get<double>();
    }
    manifest.points.push_back(std::move(p));
  }
  return manifest;
}

Manifest read_manifest(const fs::path& run_directory) {
  const fs::path path = run_directory / "manifest.json";
  try {
    return manifest_from_json(json::parse(read_file(path)));
  } catch (const std::exception& e) {
    throw std::runtime_error(path.string() + ": not a harness manifest: " + e.what());
  }
}

fs::path run_raw_directory(const fs::path& run_directory, const std::string& point_id,
                           const std::string& system, long long repeat) {
  return run_directory / "raw" / point_id / system / ("rep" + std::to_string(repeat));
}

}  // namespace harness
