#include "harness/spec/mesh_form.h"

#include "common/limits.h"

namespace harness {

namespace {

// The axes' degrees, read from the `mesh` map; nothing once an error was recorded.
std::optional<MeshDegrees> read_mesh_degrees(const YAML::Node& node, const std::string& path,
                                             const SpecOrigin& origin) {
  if (!node.IsMap()) {
    throw origin.error(node, path,
                       path +
                           ": expected a map of axis degrees {pipeline: P, tensor: T, data: D, "
                           "experts: BOOL}, got " +
                           describe_node(node));
  }
  MapReader reader(node, path, origin);
  MeshDegrees mesh;
  mesh.pipeline = reader.get_int("pipeline", 1, 1, kMaxGpus);
  mesh.tensor = reader.get_int("tensor", 1, 1, 256);
  if (reader.has("data")) mesh.data = reader.get_int("data", 1, 1, kMaxGpus);
  mesh.experts = reader.get_bool("experts", false);
  if (reader.ok() && mesh.experts && (mesh.pipeline > 1 || mesh.tensor > 1)) {
    reader.report_map(
        "experts are sharded over the data axis alone: not composed with a "
        "pipeline or tensor axis");
  }
  reader.finish();
  if (!reader.ok()) return std::nullopt;
  return mesh;
}

// The ZeRO stage of the data axis, `zero_stage` (0 where absent), read by the short forms' rule;
// -1 once reported.
int data_zero_stage(const YAML::Node& entry, const std::string& path, const SpecOrigin& origin) {
  MapReader reader(entry, path, origin);
  const auto stage = static_cast<int>(reader.get_int("zero_stage", 0, 0, 3));
  return reader.ok() ? stage : -1;
}

// The short form's kind for the axes.
std::string short_kind(const MeshDegrees& mesh, int zero_stage) {
  if (mesh.pipeline > 1) return "pipeline";
  if (mesh.tensor > 1) return "tensor_parallel";
  if (mesh.experts) return "expert_parallel";
  return zero_stage > 0 ? "sharded" : "ddp";
}

// Keys the mesh decides, refused beside it.
bool refuse_keys_the_mesh_gives(const YAML::Node& entry, const std::string& path,
                                const SpecOrigin& origin) {
  MapReader reader(entry, path, origin);
  for (const char* key : {"kind", "stages", "plan", "tensor"}) {
    if (!entry[key]) continue;
    reader.report(entry[key], key,
                  std::string("goes with a short form; beside 'mesh' the axes' degrees say it "
                              "(drop '") +
                      key + "')");
  }
  return reader.ok();
}

YAML::Node short_form(const YAML::Node& entry, const MeshDegrees& mesh, const std::string& kind) {
  YAML::Node out(YAML::NodeType::Map);
  for (const auto& item : entry) {
    const std::string key = item.first.Scalar();
    if (key == "mesh") continue;
    // A data axis alone is `kind: sharded`, whose key for the stage is `stage`; stage 0 is DDP's.
    if (key == "zero_stage" && kind == "sharded") {
      out.force_insert(YAML::Node("stage"), item.second);
    } else if (key != "zero_stage" || kind != "ddp") {
      out.force_insert(item.first, item.second);
    }
  }
  out.force_insert(YAML::Node("kind"), YAML::Node(kind));
  if (mesh.pipeline > 1) out.force_insert(YAML::Node("stages"), YAML::Node(mesh.pipeline));
  if (mesh.tensor > 1) out.force_insert(YAML::Node("tensor"), YAML::Node(mesh.tensor));
  return out;
}

}  // namespace

std::optional<MeshForm> expand_mesh_form(const YAML::Node& entry, const std::string& path,
                                         const SpecOrigin& origin) {
  if (!entry.IsMap() || !entry["mesh"]) return MeshForm{entry, std::nullopt};
  const std::optional<MeshDegrees> mesh = read_mesh_degrees(entry["mesh"], path + ".mesh", origin);
  const bool keys_ok = refuse_keys_the_mesh_gives(entry, path, origin);
  const int zero_stage = data_zero_stage(entry, path, origin);
  if (!mesh || !keys_ok || zero_stage < 0) return std::nullopt;
  return MeshForm{short_form(entry, *mesh, short_kind(*mesh, zero_stage)), mesh};
}

std::string mesh_world_problem(const std::optional<MeshDegrees>& mesh, long long world) {
  if (!mesh || !mesh->data) return "";
  const long long ranks = mesh->pipeline * mesh->tensor * *mesh->data;
  if (ranks == world) return "";
  return "mesh: pipeline " + std::to_string(mesh->pipeline) + " x tensor " +
         std::to_string(mesh->tensor) + " x data " + std::to_string(*mesh->data) + " is " +
         std::to_string(ranks) + " ranks, and run.world_size is " + std::to_string(world);
}

}  // namespace harness
