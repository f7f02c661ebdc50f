#include "runtime/protocol/worker_config.h"

#include <stdexcept>

namespace runtime {
namespace {

using nlohmann::json;

// document[key] as T, or `fallback` when absent; a present value of the wrong type names key.
template <typename T>
T read(const json& document, const std::string& path, const char* key, T fallback) {
  if (!document.contains(key)) return fallback;
  try {
    return document.at(key).get<T>();
  } catch (const json::exception&) {
    throw std::invalid_argument("worker config: " + path + key + " has the wrong type");
  }
}

template <typename T>
T require(const json& document, const std::string& path, const char* key) {
  if (!document.contains(key)) {
    throw std::invalid_argument("worker config: missing " + path + key);
  }
  return read<T>(document, path, key, T{});
}

const json& section(const json& document, const char* key) {
  if (!document.contains(key) || !document.at(key).is_object()) {
    throw std::invalid_argument(std::string("worker config: missing object ") + key);
  }
  return document.at(key);
}

json stages_json(const std::vector<StageAssignment>& stages) {
  json list = json::array();
  for (const auto& stage : stages) {
    list.push_back({{"first_layer", stage.first_layer},
                    {"last_layer", stage.last_layer},
                    {"ranks", stage.ranks}});
  }
  return list;
}

std::vector<StageAssignment> stages_from(const json& system) {
  std::vector<StageAssignment> stages;
  if (!system.contains("stages")) return stages;
  for (const auto& stage : system.at("stages")) {
    stages.push_back({require<int>(stage, "system.stages[].", "first_layer"),
                      require<int>(stage, "system.stages[].", "last_layer"),
                      require<std::vector<int>>(stage, "system.stages[].", "ranks")});
  }
  return stages;
}

WorkerSystem system_from(const json& s) {
  WorkerSystem system;
  system.name = require<std::string>(s, "system.", "name");
  try {
    system.kind = parse_system_kind(read<std::string>(s, "system.", "kind", "ddp"));
    if (s.contains("schedule")) {
      system.schedule = parse_pipeline_schedule(require<std::string>(s, "system.", "schedule"));
    }
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("worker config: system: ") + e.what());
  }
  system.mode = read<std::string>(s, "system.", "mode", system.mode);
  system.bucket_mb = read<double>(s, "system.", "bucket_mb", system.bucket_mb);
  system.first_bucket_mb = read<double>(s, "system.", "first_bucket_mb", system.first_bucket_mb);
  system.compression = read<std::string>(s, "system.", "compression", system.compression);
  system.powersgd_rank = read<long long>(s, "system.", "powersgd_rank", system.powersgd_rank);
  system.powersgd_warmup_steps =
      read<long long>(s, "system.", "powersgd_warmup_steps", system.powersgd_warmup_steps);
  system.micro_batches = read<int>(s, "system.", "micro_batches", system.micro_batches);
  system.schedule_csv = read<std::string>(s, "system.", "schedule_csv", "");
  system.shard_stage = read<int>(s, "system.", "shard_stage", system.shard_stage);
  system.shard_unit = read<std::string>(s, "system.", "shard_unit", system.shard_unit);
  system.shard_prefetch = read<bool>(s, "system.", "shard_prefetch", system.shard_prefetch);
  system.stages = stages_from(s);
  if (system.kind == SystemKind::kPipeline && system.stages.empty()) {
    throw std::invalid_argument("worker config: a pipeline system needs system.stages");
  }
  return system;
}

}  // namespace

SystemKind parse_system_kind(const std::string& name) {
  if (name == "ddp") return SystemKind::kDdp;
  if (name == "expert_parallel") return SystemKind::kExpertParallel;
  if (name == "pipeline") return SystemKind::kPipeline;
  if (name == "sharded") return SystemKind::kSharded;
  throw std::invalid_argument("unknown system kind '" + name +
                              "' (expected ddp, expert_parallel, pipeline or sharded)");
}

std::string to_string(SystemKind kind) {
  switch (kind) {
    case SystemKind::kPipeline:
      return "pipeline";
    case SystemKind::kExpertParallel:
      return "expert_parallel";
    case SystemKind::kSharded:
      return "sharded";
    case SystemKind::kDdp:
      break;
  }
  return "ddp";
}

json to_json(const WorkerConfig& c) {
  json system = {{"name", c.system.name},
                 {"kind", to_string(c.system.kind)},
                 {"mode", c.system.mode},
                 {"bucket_mb", c.system.bucket_mb},
                 {"first_bucket_mb", c.system.first_bucket_mb},
                 {"compression", c.system.compression},
                 {"powersgd_rank", c.system.powersgd_rank},
                 {"powersgd_warmup_steps", c.system.powersgd_warmup_steps}};
  if (c.system.kind == SystemKind::kPipeline) {
    system["schedule"] = to_string(c.system.schedule);
    system["micro_batches"] = c.system.micro_batches;
    system["stages"] = stages_json(c.system.stages);
    if (!c.system.schedule_csv.empty()) system["schedule_csv"] = c.system.schedule_csv;
  }
  if (c.system.kind == SystemKind::kSharded) {
    system["shard_stage"] = c.system.shard_stage;
    system["shard_unit"] = c.system.shard_unit;
    system["shard_prefetch"] = c.system.shard_prefetch;
  }
  return {{"model",
           {{"name", c.model.name},
            {"batch_size", c.model.batch_size},
            {"input_shape", c.model.input_shape},
            {"num_classes", c.model.num_classes},
            {"loss", c.model.loss},
            {"precision", c.model.precision},
            {"depth", c.model.depth},
            {"width", c.model.width},
            {"moe",
             {{"experts", c.model.moe.experts},
              {"top_k", c.model.moe.top_k},
              {"capacity_factor", c.model.moe.capacity_factor},
              {"every", c.model.moe.every}}},
            {"decoder",
             {{"heads", c.model.decoder.heads},
              {"kv_heads", c.model.decoder.kv_heads},
              {"vocab", c.model.decoder.vocab}}}}},
          {"optimizer",
           {{"name", c.optimizer.name},
            {"lr", c.optimizer.lr},
            {"momentum", c.optimizer.momentum},
            {"betas", {c.optimizer.beta1, c.optimizer.beta2}},
            {"eps", c.optimizer.eps},
            {"weight_decay", c.optimizer.weight_decay}}},
          {"iterations", c.iterations},
          {"warmup", c.warmup},
          {"seed", c.seed},
          {"threads", c.threads},
          {"pin_cpus", c.pin_cpus},
          {"heap", c.heap},
          {"device", c.device},
          {"backend", c.backend},
          {"collective_timeout_s", c.collective_timeout_s},
          {"log_buckets", c.log_buckets},
          {"trace_iteration", c.trace_iteration},
          {"system", system}};
}

WorkerConfig worker_config_from_json(const json& d) {
  if (!d.is_object()) throw std::invalid_argument("worker config: expected a JSON object");
  WorkerConfig c;
  const json& model = section(d, "model");
  c.model.name = require<std::string>(model, "model.", "name");
  c.model.batch_size = require<long long>(model, "model.", "batch_size");
  c.model.input_shape = require<std::vector<long long>>(model, "model.", "input_shape");
  c.model.num_classes = read<long long>(model, "model.", "num_classes", 0);
  c.model.loss = read<std::string>(model, "model.", "loss", c.model.loss);
  c.model.precision = read<std::string>(model, "model.", "precision", c.model.precision);
  c.model.depth = read<long long>(model, "model.", "depth", 0);
  c.model.width = read<long long>(model, "model.", "width", 0);
  if (model.contains("moe")) {
    const json& moe = section(model, "moe");
    MoeShape& shape = c.model.moe;
    shape.experts = read<int64_t>(moe, "model.moe.", "experts", shape.experts);
    shape.top_k = read<int64_t>(moe, "model.moe.", "top_k", shape.top_k);
    shape.capacity_factor =
        read<double>(moe, "model.moe.", "capacity_factor", shape.capacity_factor);
    shape.every = read<int64_t>(moe, "model.moe.", "every", shape.every);
  }
  if (model.contains("decoder")) {
    const json& decoder = section(model, "decoder");
    DecoderShape& shape = c.model.decoder;
    shape.heads = read<int64_t>(decoder, "model.decoder.", "heads", 0);
    shape.kv_heads = read<int64_t>(decoder, "model.decoder.", "kv_heads", 0);
    shape.vocab = read<int64_t>(decoder, "model.decoder.", "vocab", 0);
  }
  const json& optimizer = section(d, "optimizer");
  c.optimizer.name = read<std::string>(optimizer, "optimizer.", "name", c.optimizer.name);
  c.optimizer.lr = require<double>(optimizer, "optimizer.", "lr");
  c.optimizer.momentum = read<double>(optimizer, "optimizer.", "momentum", 0.0);
  const auto betas = read<std::vector<double>>(optimizer, "optimizer.", "betas",
                                               {c.optimizer.beta1, c.optimizer.beta2});
  if (betas.size() != 2) throw std::invalid_argument("worker config: optimizer.betas: expected 2");
  c.optimizer.beta1 = betas[0];
  c.optimizer.beta2 = betas[1];
  c.optimizer.eps = read<double>(optimizer, "optimizer.", "eps", c.optimizer.eps);
  c.optimizer.weight_decay =
      read<double>(optimizer, "optimizer.", "weight_decay", c.optimizer.weight_decay);
  c.iterations = require<long long>(d, "", "iterations");
  c.warmup = require<long long>(d, "", "warmup");
  c.seed = require<long long>(d, "", "seed");
  c.threads = require<int>(d, "", "threads");
  c.pin_cpus = read<bool>(d, "", "pin_cpus", false);
  c.heap = read<std::string>(d, "", "heap", c.heap);
  c.device = read<std::string>(d, "", "device", c.device);
  c.backend = read<std::string>(d, "", "backend", c.backend);
  c.collective_timeout_s = read<double>(d, "", "collective_timeout_s", c.collective_timeout_s);
  c.log_buckets = read<bool>(d, "", "log_buckets", false);
  c.trace_iteration = read<long long>(d, "", "trace_iteration", -1);
  c.system = system_from(section(d, "system"));
  return c;
}

}  // namespace runtime
