// A system written as its device mesh (torchtitan's ParallelDims, as a spec writes it):
//
//   - {name: pp_fsdp_tp, mesh: {pipeline: 2, tensor: 2, data: 2}, zero_stage: 3,
//      sequence_parallel: true}
//
// `mesh` gives each axis's degree -- `pipeline` (stages on rank groups), `tensor` (ranks that
// split each layer), `data` (the rest of the world; given, it is checked against the world at
// each point) -- and `experts: true` shards a mixture's experts over the data axis. The keys
// beside it are the short forms' own (`zero_stage`, `schedule`, `sequence_parallel`, `mode`,
// ...). It expands to the short form that describes the same system, which the spec's reader
// for that kind then reads: one set of rules for both forms, and one runtime::ParallelSystem.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>

#include "harness/spec/yaml_reader.h"

namespace harness {

struct MeshDegrees {
  long long pipeline = 1;
  long long tensor = 1;
  std::optional<long long> data;  // where the spec gives it
  bool experts = false;
};

struct MeshForm {
  YAML::Node entry;                 // the short form: `kind` (and `stages`, `tensor`) for `mesh`
  std::optional<MeshDegrees> mesh;  // nothing for an entry written in a short form
};

// `entry` (a map of `systems:` at `path`) unchanged when it has no `mesh`, else the short form
// it expands to (a kind every spec that takes `mesh` reads). Nothing when an error was recorded
// (SpecOrigin::report_to), which otherwise throws.
std::optional<MeshForm> expand_mesh_form(const YAML::Node& entry, const std::string& path,
                                         const SpecOrigin& origin);

// Why a mesh whose data degree is given does not fill `world` ranks; "" where it does or
// where the data axis takes whatever the other axes leave.
std::string mesh_world_problem(const std::optional<MeshDegrees>& mesh, long long world);

}  // namespace harness
