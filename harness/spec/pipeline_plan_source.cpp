#include "harness/spec/pipeline_plan_source.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/json_file.h"
#include "common/text_util.h"
#include "harness/cli/plan_command.h"
#include "harness/spec/pipeline_schedule_source.h"

namespace harness {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// "Linear(fc1)" -> "fc1": the planner's layer descriptions carry the module path in brackets.
std::string layer_name_of(const std::string& description) {
  const auto open = description.rfind('(');
  const auto close = description.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return description;
  return description.substr(open + 1, close - open - 1);
}

json read_plan_file(const fs::path& path) {
  const std::optional<std::string> text = read_input_file(path);
  if (!text) throw InputError(path.string() + ": cannot open the plan");
  try {
    return parse_json(*text);
  } catch (const json::exception& e) {
    throw InputError(path.string() + ": not a plan.json: " + e.what());
  }
}

std::string join_numbers(const std::vector<long long>& values) {
  std::string text;
  for (long long v : values) text += (text.empty() ? "" : ", ") + std::to_string(v);
  return text;
}

}  // namespace

std::vector<PipelineStageSpec> equal_stages(int stages, size_t layers, long long world_size) {
  if (stages > static_cast<int>(layers)) {
    throw InputError("stages: " + std::to_string(stages) + " stages but the model has only " +
                     std::to_string(layers) + " layers");
  }
  std::vector<PipelineStageSpec> result;
  const long long replicas = world_size / stages;
  for (int s = 0; s < stages; ++s) {
    PipelineStageSpec spec;
    spec.first_layer = static_cast<int>(layers * s / stages);
    spec.last_layer = static_cast<int>(layers * (s + 1) / stages) - 1;
    for (long long r = 0; r < replicas; ++r)
      spec.ranks.push_back(static_cast<int>(s * replicas + r));
    result.push_back(spec);
  }
  return result;
}

std::vector<PipelineStageSpec> balanced_stages(int stages, const std::vector<double>& costs,
                                               long long world_size) {
  const size_t layers = costs.size();
  auto result = equal_stages(stages, layers, world_size);  // checks stages <= layers; ranks
  // best[s][i]: the smallest possible maximum stage cost splitting layers [0, i) into s stages.
  std::vector<double> prefix(layers + 1, 0.0);
  for (size_t i = 0; i < layers; ++i) prefix[i + 1] = prefix[i] + costs[i];
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> best(stages + 1, std::vector<double>(layers + 1, inf));
  std::vector<std::vector<size_t>> cut(stages + 1, std::vector<size_t>(layers + 1, 0));
  best[0][0] = 0;
  for (int s = 1; s <= stages; ++s) {
    for (size_t i = s; i <= layers; ++i) {
      for (size_t j = s - 1; j < i; ++j) {
        const double cost = std::max(best[s - 1][j], prefix[i] - prefix[j]);
        if (cost < best[s][i] - 1e-12) {
          best[s][i] = cost;
          cut[s][i] = j;
        }
      }
    }
  }
  size_t end = layers;
  for (int s = stages; s >= 1; --s) {
    const size_t begin = cut[s][end];
    result[s - 1].first_layer = static_cast<int>(begin);
    result[s - 1].last_layer = static_cast<int>(end) - 1;
    end = begin;
  }
  return result;
}

std::vector<PipelineStageSpec> stages_from_plan_json(const json& plan,
                                                     const std::vector<std::string>& layer_names,
                                                     long long global_batch, long long world_size,
                                                     const std::string& source) {
  if (plan.value("schema", "") != "harness.plan/1") {
    throw InputError(source + ": not a harness.plan/1 document (schema '" +
                     plan.value("schema", "") + "')");
  }
  const json* chosen = nullptr;
  std::vector<long long> available;
  for (const auto& result : plan.at("results")) {
    available.push_back(result.at("global_batch_size").get<long long>());
    if (available.back() == global_batch) chosen = &result;
  }
  if (chosen == nullptr) {
    throw InputError(source + ": no plan for global batch " + std::to_string(global_batch) +
                     " (model.batch_size x run.world_size); the plan has " +
                     join_numbers(available));
  }
  if (!chosen->contains("plan") || chosen->at("plan").is_null()) {
    throw InputError(source + ": the planner found no pipeline plan for global batch " +
                     std::to_string(global_batch));
  }
  std::vector<PipelineStageSpec> stages;
  for (const auto& stage : chosen->at("plan").at("stages")) {
    PipelineStageSpec spec;
    std::vector<int> indexes;
    for (const auto& description : stage.at("layers")) {
      const std::string name = layer_name_of(description.get<std::string>());
      const auto found = std::find(layer_names.begin(), layer_names.end(), name);
      if (found == layer_names.end()) continue;  // the profile's input node
      indexes.push_back(static_cast<int>(found - layer_names.begin()));
    }
    if (indexes.empty()) {
      throw InputError(source + ": stage " + std::to_string(stages.size()) +
                       " has none of the model's layers (a plan for another model?)");
    }
    std::sort(indexes.begin(), indexes.end());
    if (indexes.back() - indexes.front() + 1 != static_cast<int>(indexes.size())) {
      throw InputError(source + ": stage " + std::to_string(stages.size()) +
                       "'s layers are not contiguous in the model's chain");
    }
    spec.first_layer = indexes.front();
    spec.last_layer = indexes.back();
    for (const auto& gpu : stage.at("gpus")) {
      const long long rank = gpu.get<long long>();
      if (rank >= world_size) {
        throw InputError(source + ": the plan uses GPU " + std::to_string(rank) +
                         " but the run has " + std::to_string(world_size) + " ranks");
      }
      spec.ranks.push_back(static_cast<int>(rank));
    }
    stages.push_back(spec);
  }
  // Layers the profile did not list at the ends (none normally) join the nearest stage.
  stages.front().first_layer = 0;
  stages.back().last_layer = static_cast<int>(layer_names.size()) - 1;
  return stages;
}

std::vector<PipelineStageSpec> resolve_pipeline_stages(const SystemConfig& system,
                                                       const PointConfig& point,
                                                       const PlanSourceContext& context) {
  if (system.plan.empty() && system.stage_count == 0) return system.stages;
  const long long global_batch = point.model.batch_size * point.run.world_size;
  const auto layer_names = context.model_layer_names(point.model);
  if (system.stage_count > 0) {
    // N positions x stages per rank, each split stage on one rank for now, then placed.
    const std::vector<int> positions = *known_stage_positions(system);
    const int stages = static_cast<int>(positions.size());
    auto split = context.model_layer_costs
                     ? balanced_stages(stages, context.model_layer_costs(point.model), stages)
                     : equal_stages(stages, layer_names.size(), stages);
    return placed_stages(system, positions, std::move(split), point.run.world_size);
  }
  if (system.plan != "auto") {
    return stages_from_plan_json(read_plan_file(system.plan), layer_names, global_batch,
                                 point.run.world_size, system.plan);
  }

  // plan: auto -- the model's profile on this device, measured now if there is none.
  const std::string profile_name = point.model.name + "-" + point.run.device;
  fs::path profile = context.profiles_directory / profile_name / "graph.txt";
  const fs::path work = context.work_directory / "plans" / (system.name + "-" + profile_name);
  fs::create_directories(work);
  int profile_batch = 0;
  // The committed profile is of the model as the zoo builds it by default, at the input shape
  // it records: a point with another depth, width, class count or input shape is measured.
  if (fs::exists(profile) && fs::exists(profile.parent_path() / "profile.json")) {
    const json committed = read_plan_file(profile.parent_path() / "profile.json");
    const bool same_model =
        point.model.depth == 0 && point.model.width == 0 && point.model.num_classes == 0 &&
        point.model.moe == runtime::MoeShape{} && point.model.decoder == runtime::DecoderShape{} &&
        (point.model.input_shape.empty() ||
         committed.value("input_shape", std::vector<long long>{}) == point.model.input_shape);
    if (same_model) profile_batch = committed.value("batch", 0);
  }
  // One measured for an earlier point of this study (same model and batch) is used again.
  if (const fs::path earlier = work / "profile"; profile_batch == 0 &&
                                                 fs::exists(earlier / "graph.txt") &&
                                                 fs::exists(earlier / "profile.json")) {
    const json measured = read_plan_file(earlier / "profile.json");
    if (measured.value("batch", 0LL) == point.model.batch_size) {
      profile = earlier / "graph.txt";
      profile_batch = static_cast<int>(point.model.batch_size);
    }
  }
  if (profile_batch == 0) {
    if (context.executable.empty()) {
      throw InputError("plan: auto: no profile " + profile.string() +
                       " and no harness binary to measure one");
    }
    const fs::path measured = work / "profile";
    std::string command = "'" + context.executable + "' profile layers";
    for (const std::string& flag : rank_model_flags(point.model)) command += " " + flag;
    command += " --batch " + std::to_string(point.model.batch_size) +
               " --repetitions 3 --warmup 1 --out '" + measured.string() + "' >'" +
               (work / "profile.log").string() + "' 2>&1";
    std::fprintf(stderr, "plan: auto: no profile of %s on %s; measuring one (%s)\n",
                 point.model.name.c_str(), point.run.device.c_str(), measured.c_str());
    if (std::system(command.c_str()) != 0) {
      throw InputError("plan: auto: profiling " + point.model.name + " failed; see " +
                       (work / "profile.log").string());
    }
    profile = measured / "graph.txt";
    profile_batch = static_cast<int>(point.model.batch_size);
  }
  PlanRequest request;
  request.profile = profile.string();
  request.profile_batch = profile_batch;
  request.global_batches = std::to_string(global_batch);
  request.devices = "1x" + std::to_string(point.run.world_size);
  request.topology = context.topology;
  if (!context.emulated_topology.empty()) {
    // The machines the ranks run on, priced by what their links delivered.
    request.topology = context.emulated_topology;
    request.devices = std::to_string(point.cluster.machines) + "x" +
                      std::to_string(point.run.world_size / point.cluster.machines);
  }
  if (request.topology.empty() &&
      fs::exists(context.profiles_directory / "gloo-2ranks-cpu" / "topology.yaml")) {
    request.topology = (context.profiles_directory / "gloo-2ranks-cpu" / "topology.yaml").string();
  }
  const fs::path planned = work / context.point_id;
  fs::create_directories(planned);
  request.out_dir = planned.string();
  std::ostringstream log;
  if (run_plan(request, log) != 0) {
    throw InputError("plan: auto: the planner failed for " + point.model.name + ":\n" + log.str());
  }
  return stages_from_plan_json(read_plan_file(planned / "plan.json"), layer_names, global_batch,
                               point.run.world_size, (planned / "plan.json").string());
}

}  // namespace harness
