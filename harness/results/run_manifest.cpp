#include "harness/results/run_manifest.h"

#include <set>

#include "common/json_fields.h"
#include "common/json_file.h"
#include "common/limits.h"
#include "harness/spec/spec.h"

namespace harness {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The DDP mode a manifest records: none for a pipeline or an external program, whose gradients
// no reducer of a DDP mode sums.
std::string recorded_mode(const SystemConfig& system) {
  const SystemKind kind = system.kind();
  return kind == SystemKind::kPipeline || kind == SystemKind::kExternal ? ""
                                                                        : system.gradients.mode;
}

}  // namespace

Manifest make_manifest(const Experiment& experiment) {
  Manifest manifest;
  manifest.experiment = experiment.name;
  manifest.baseline = experiment.baseline;
  for (const auto& system : experiment.systems) {
    manifest.systems.push_back({system.name, to_string(system.kind()), recorded_mode(system)});
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

Manifest manifest_from_json(const json& in, const std::string& file) {
  // Every field checked against the limits a spec has: report and compare loop over these
  // numbers (a world size of 10^9 would be a hang) and build paths from these names.
  const JsonFields fields(file);
  fields.expect_object(in, "");
  Manifest manifest;
  manifest.experiment = fields.folder_name(in, "", "experiment");
  const json& systems = fields.array(in, "", "systems", kMaxSystems);
  std::set<std::string> system_names;
  for (size_t i = 0; i < systems.size(); ++i) {
    const std::string field = json_field("systems", i);
    ManifestSystem system{fields.folder_name(systems[i], field, "name"),
                          fields.text(systems[i], field, "kind"),
                          fields.text(systems[i], field, "mode")};
    if (!system_names.insert(system.name).second) {
      fields.fail(json_field(field, "name"), "duplicate system '" + system.name + "'");
    }
    manifest.systems.push_back(std::move(system));
  }
  if (manifest.systems.empty()) fields.fail("systems", "no system");
  manifest.baseline = fields.text(in, "", "baseline");
  if (!system_names.count(manifest.baseline)) {
    fields.fail("baseline", "'" + manifest.baseline + "' is none of the systems");
  }
  const json& points = fields.array(in, "", "points", static_cast<size_t>(kMaxSweepPoints));
  if (points.empty()) fields.fail("points", "no point");
  std::set<std::string> point_ids;
  long long runs = 0, rank_runs = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    const std::string field = json_field("points", i);
    const json& point = points[i];
    ManifestPoint p;
    p.id = fields.folder_name(point, field, "id");
    if (!point_ids.insert(p.id).second) {
      fields.fail(json_field(field, "id"), "duplicate point '" + p.id + "'");
    }
    p.label = fields.text(point, field, "label");
    const json& coordinates =
        fields.array(point, field, "coordinates", static_cast<size_t>(kMaxSweepPoints));
    for (size_t c = 0; c < coordinates.size(); ++c) {
      const std::string at = json_field(json_field(field, "coordinates"), c);
      p.coordinates.emplace_back(fields.text(coordinates[c], at, "axis"),
                                 fields.text(coordinates[c], at, "value"));
    }
    p.world_size = fields.integer(point, field, "world_size", 1, kMaxGpus);
    p.repeats = fields.integer(point, field, "repeats", 1, kMaxRepeats);
    p.iterations = fields.integer(point, field, "iterations", 1, kMaxCount);
    p.warmup = fields.integer(point, field, "warmup", 0, kMaxCount);
    // Folders written before emulated machines existed have no "cluster": one machine.
    if (point.contains("cluster")) {
      const std::string at = json_field(field, "cluster");
      const json& cluster = point["cluster"];
      p.machines = fields.integer(cluster, at, "machines", 1, p.world_size);
      if (!fields.member(cluster, at, "inter_machine_rate_bits_per_s").is_null()) {
        p.inter_machine_bits_per_s = fields.positive(cluster, at, "inter_machine_rate_bits_per_s");
      }
    }
    const long long point_runs = p.repeats * static_cast<long long>(manifest.systems.size());
    runs += point_runs;
    rank_runs += point_runs * p.world_size;
    if (runs > kMaxRuns || rank_runs > kMaxRankRuns) {
      fields.fail(field, "the study would hold more than " + std::to_string(kMaxRuns) +
                             " runs or " + std::to_string(kMaxRankRuns) +
                             " rank files (points x systems x repeats x world size)");
    }
    manifest.points.push_back(std::move(p));
  }
  return manifest;
}

Manifest read_manifest(const fs::path& run_directory) {
  const fs::path path = run_directory / "manifest.json";
  return manifest_from_json(read_json_file(path), path.string());
}

fs::path run_raw_directory(const fs::path& run_directory, const std::string& point_id,
                           const std::string& system, long long repeat) {
  return run_directory / "raw" / point_id / system / ("rep" + std::to_string(repeat));
}

}  // namespace harness
