// Where a pipeline system's stages come from: written inline in the spec, read from a planner
// plan.json (schema harness.plan/1, planner/README.md), or planned on the spot (`plan: auto`:
// the DAPPLE planner on the model's layer profile for the point's world size). Torch-free:
// the model's layer names come from the caller.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "harness/spec/spec.h"

namespace harness {

struct PlanSourceContext {
  // The model's layer names in chain order (runtime's ZooModel::layers()).
  std::function<std::vector<std::string>(const ModelConfig&)> model_layer_names;
  // Per-layer costs (forward ms) that `stages: N` balances; unset: equal layer counts.
  std::function<std::vector<double>(const ModelConfig&)> model_layer_costs;
  // `plan: auto`: where profiles live (profiles/<model>-<device>/graph.txt) and the topology
  // the planner uses; the harness binary profiles a model that has none (empty: do not).
  std::filesystem::path profiles_directory = "profiles";
  std::string topology;  // empty: profiles/gloo-2ranks-cpu/topology.yaml when present
  // The point on emulated machines (cluster.machines > 1): the topology measured on them
  // (harness/study/link_probe.h), planned as that many machines; empty: none. Set per point,
  // as point_id below.
  std::string emulated_topology;
  std::string executable;
  // Planner outputs (plan.json, plan.csv, the profile it measured) are kept here: the profile
  // in plans/<system>-<model>-<device>/profile (measured once, for every point), each point's
  // plan in a folder of its own below that, named `point_id` (points differ in their world,
  // batch or emulated links, and so in their plans).
  std::filesystem::path work_directory;
  std::string point_id = "p000";
};

// Stages of `system` at `point`: inline ones as written, a plan file's or an automatic plan's
// converted to layer indexes of the model and to ranks. Throws InputError naming the plan and
// what does not fit (a global batch the plan has no result for, more GPUs than ranks, layers
// that are not contiguous or not the model's).
std::vector<PipelineStageSpec> resolve_pipeline_stages(const SystemConfig& system,
                                                       const PointConfig& point,
                                                       const PlanSourceContext& context);

// `stages: N` without costs: N stages of equal layer counts (the first ones one layer shorter
// when the count does not divide), stage s on ranks s*R .. s*R+R-1 with R = world_size / N.
std::vector<PipelineStageSpec> equal_stages(int stages, size_t layers, long long world_size);

// `stages: N` with per-layer costs: the contiguous split into N non-empty stages whose most
// expensive stage is cheapest (ties: the earliest such split), ranks as equal_stages.
std::vector<PipelineStageSpec> balanced_stages(int stages, const std::vector<double>& costs,
                                               long long world_size);

// The stages of the result for `global_batch` in a harness.plan/1 document (exposed for tests).
std::vector<PipelineStageSpec> stages_from_plan_json(const nlohmann::json& plan,
                                                     const std::vector<std::string>& layer_names,
                                                     long long global_batch, long long world_size,
                                                     const std::string& source);

}  // namespace harness
