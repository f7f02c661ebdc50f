#include "runtime/parallel/parallel_system.h"

#include <algorithm>
#include <stdexcept>

#include "runtime/protocol/config_fields.h"

namespace runtime {
namespace {

using config_fields::read;
using config_fields::require;
using config_fields::section;
using nlohmann::json;

constexpr SystemKind kKinds[] = {SystemKind::kDdp,           SystemKind::kExpertParallel,
                                 SystemKind::kExternal,      SystemKind::kPipeline,
                                 SystemKind::kSharded,       SystemKind::kSpmd,
                                 SystemKind::kTensorParallel};

json stages_json(const std::vector<StageAssignment>& stages) {
  json list = json::array();
  for (const auto& stage : stages) {
    list.push_back({{"first_layer", stage.first_layer},
                    {"last_layer", stage.last_layer},
                    {"ranks", stage.ranks}});
  }
  return list;
}

std::vector<StageAssignment> stages_from(const json& pipeline) {
  const std::string path = "system.pipeline.stages[].";
  std::vector<StageAssignment> stages;
  if (!pipeline.contains("stages") || !pipeline.at("stages").is_array()) {
    throw std::invalid_argument("worker config: a pipeline system needs system.pipeline.stages");
  }
  for (const auto& stage : pipeline.at("stages")) {
    stages.push_back({require<int>(stage, path, "first_layer"),
                      require<int>(stage, path, "last_layer"),
                      require<std::vector<int>>(stage, path, "ranks")});
  }
  return stages;
}

GradientReduction gradients_from(const json& s) {
  const std::string path = "system.gradients.";
  GradientReduction g;
  g.mode = read<std::string>(s, path, "mode", g.mode);
  g.bucket_mb = read<double>(s, path, "bucket_mb", g.bucket_mb);
  g.first_bucket_mb = read<double>(s, path, "first_bucket_mb", g.first_bucket_mb);
  g.compression = read<std::string>(s, path, "compression", g.compression);
  g.powersgd_rank = read<long long>(s, path, "powersgd_rank", g.powersgd_rank);
  g.powersgd_warmup_steps =
      read<long long>(s, path, "powersgd_warmup_steps", g.powersgd_warmup_steps);
  return g;
}

void read_data_axis(const json& s, DataAxis& data) {
  const std::string path = "system.data.";
  data.zero_stage = read<int>(s, path, "zero_stage", data.zero_stage);
  if (data.zero_stage < 0 || data.zero_stage > 3) {
    throw std::invalid_argument("worker config: system.data.zero_stage must be 0-3");
  }
  data.unit = parse_shard_unit(read<std::string>(s, path, "unit", to_string(data.unit)));
  data.prefetch = read<bool>(s, path, "prefetch", data.prefetch);
}

TensorAxis read_tensor_axis(const json& s) {
  const std::string path = "system.tensor.";
  TensorAxis tensor;
  tensor.degree = require<int>(s, path, "degree");
  if (tensor.degree < 2) throw std::invalid_argument("worker config: system.tensor.degree < 2");
  tensor.sequence_parallel = read<bool>(s, path, "sequence_parallel", false);
  tensor.vocabulary_parallel = read<bool>(s, path, "vocabulary_parallel", false);
  tensor.recompute_gather = read<bool>(s, path, "recompute_gather", false);
  return tensor;
}

PipelineAxis read_pipeline_axis(const json& s) {
  const std::string path = "system.pipeline.";
  PipelineAxis pipeline;
  pipeline.schedule =
      parse_pipeline_schedule(read<std::string>(s, path, "schedule", to_string(pipeline.schedule)));
  pipeline.schedule_csv = read<std::string>(s, path, "schedule_csv", "");
  pipeline.micro_batches = read<int>(s, path, "micro_batches", pipeline.micro_batches);
  pipeline.stages = stages_from(s);
  if (pipeline.stages.empty()) {
    throw std::invalid_argument("worker config: system.pipeline.stages is empty");
  }
  return pipeline;
}

SpmdStrategy read_spmd_strategy(const json& s) {
  const std::string path = "system.spmd.";
  SpmdStrategy strategy;
  strategy.comm = read<std::string>(s, path, "comm", "");
  strategy.gflops = read<double>(s, path, "gflops", 0.0);
  strategy.measured_compute = read<bool>(s, path, "measured_compute", false);
  strategy.operators = s.value("operators", json::array());
  if (!strategy.operators.is_array() || strategy.operators.empty()) {
    throw std::invalid_argument("worker config: system.spmd.operators must be a non-empty list");
  }
  return strategy;
}

// The axes a hand-written kind stands for, before the objects that follow refine them.
ParallelSystem expand_kind(SystemKind kind) {
  if (kind == SystemKind::kExternal) {
    throw std::invalid_argument("an external system runs no harness rank");
  }
  ParallelSystem system;
  if (kind == SystemKind::kSharded) system.data.zero_stage = 3;
  if (kind == SystemKind::kExpertParallel) system.experts = true;
  return system;
}

}  // namespace

std::string to_string(SystemKind kind) {
  switch (kind) {
    case SystemKind::kPipeline:
      return "pipeline";
    case SystemKind::kExpertParallel:
      return "expert_parallel";
    case SystemKind::kSharded:
      return "sharded";
    case SystemKind::kExternal:
      return "external";
    case SystemKind::kTensorParallel:
      return "tensor_parallel";
    case SystemKind::kSpmd:
      return "spmd";
    case SystemKind::kDdp:
      break;
  }
  return "ddp";
}

std::vector<std::string> system_kind_names() {
  std::vector<std::string> names;
  for (SystemKind kind : kKinds) names.push_back(to_string(kind));
  return names;
}

SystemKind parse_system_kind(const std::string& name) {
  for (SystemKind kind : kKinds) {
    if (to_string(kind) == name) return kind;
  }
  std::string choices;
  for (SystemKind kind : kKinds) choices += (choices.empty() ? "" : ", ") + to_string(kind);
  throw std::invalid_argument("unknown system kind '" + name + "' (expected " + choices + ")");
}

std::string to_string(ShardUnitKind unit) {
  return unit == ShardUnitKind::kModel ? "model" : "layer";
}

ShardUnitKind parse_shard_unit(const std::string& name) {
  if (name == "layer") return ShardUnitKind::kLayer;
  if (name == "model") return ShardUnitKind::kModel;
  throw std::invalid_argument("unknown shard unit '" + name + "' (expected layer or model)");
}

SystemKind kind_of(const ParallelSystem& system) {
  if (system.spmd) return SystemKind::kSpmd;
  if (system.pipeline) return SystemKind::kPipeline;
  if (system.tensor.split()) return SystemKind::kTensorParallel;
  if (system.experts) return SystemKind::kExpertParallel;
  if (system.data.sharded()) return SystemKind::kSharded;
  return SystemKind::kDdp;
}

json to_json(const ParallelSystem& system) {
  const GradientReduction& g = system.gradients;
  json out = {{"name", system.name},
              {"kind", to_string(kind_of(system))},
              {"gradients",
               {{"mode", g.mode},
                {"bucket_mb", g.bucket_mb},
                {"first_bucket_mb", g.first_bucket_mb},
                {"compression", g.compression},
                {"powersgd_rank", g.powersgd_rank},
                {"powersgd_warmup_steps", g.powersgd_warmup_steps}}}};
  if (system.data.sharded()) {
    out["data"] = {{"zero_stage", system.data.zero_stage},
                   {"unit", to_string(system.data.unit)},
                   {"prefetch", system.data.prefetch}};
  }
  if (system.pipeline) {
    const PipelineAxis& p = *system.pipeline;
    out["pipeline"] = {{"schedule", to_string(p.schedule)},
                       {"micro_batches", p.micro_batches},
                       {"stages", stages_json(p.stages)}};
    if (!p.schedule_csv.empty()) out["pipeline"]["schedule_csv"] = p.schedule_csv;
  }
  if (system.experts) out["experts"] = true;
  if (system.tensor.split()) {
    out["tensor"] = {{"degree", system.tensor.degree},
                     {"sequence_parallel", system.tensor.sequence_parallel},
                     {"vocabulary_parallel", system.tensor.vocabulary_parallel},
                     {"recompute_gather", system.tensor.recompute_gather}};
  }
  if (system.spmd) {
    out["spmd"] = {{"comm", system.spmd->comm},
                   {"gflops", system.spmd->gflops},
                   {"measured_compute", system.spmd->measured_compute},
                   {"operators", system.spmd->operators}};
  }
  return out;
}

ParallelSystem parallel_system_from_json(const json& s) {
  const std::string kind_name = read<std::string>(s, "system.", "kind", "ddp");
  try {
    const SystemKind kind = parse_system_kind(kind_name);
    if (kind == SystemKind::kPipeline && !s.contains("pipeline")) {
      throw std::invalid_argument("worker config: a pipeline system needs system.pipeline.stages");
    }
    if (kind == SystemKind::kSpmd && !s.contains("spmd")) {
      throw std::invalid_argument("worker config: an spmd system needs system.spmd.operators");
    }
    ParallelSystem system = expand_kind(kind);
    system.name = require<std::string>(s, "system.", "name");
    if (s.contains("gradients"))
      system.gradients = gradients_from(section(s, "system.", "gradients"));
    if (s.contains("data")) read_data_axis(section(s, "system.", "data"), system.data);
    if (s.contains("pipeline")) {
      system.pipeline = read_pipeline_axis(section(s, "system.", "pipeline"));
    }
    system.experts = read<bool>(s, "system.", "experts", system.experts);
    if (s.contains("tensor")) system.tensor = read_tensor_axis(section(s, "system.", "tensor"));
    if (s.contains("spmd")) system.spmd = read_spmd_strategy(section(s, "system.", "spmd"));
    if (kind_of(system) != kind) {
      throw std::invalid_argument("its axes make a " + to_string(kind_of(system)) +
                                  " system, not " + kind_name);
    }
    return system;
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    if (what.rfind("worker config:", 0) == 0) throw;
    throw std::invalid_argument("worker config: system: " + what);
  }
}

}  // namespace runtime
