#include "runtime/protocol/worker_config.h"

#include <stdexcept>

#include "runtime/protocol/config_fields.h"

namespace runtime {
namespace {

using nlohmann::json;

using config_fields::read;
using config_fields::require;

const json& section(const json& document, const char* key) {
  return config_fields::section(document, "", key);
}

}  // namespace

json to_json(const WorkerConfig& c) {
  return {{"model",
           {{"name", c.model.name},
            {"batch_size", c.model.batch_size},
            {"input_shape", c.model.input_shape},
            {"num_classes", c.model.num_classes},
            {"loss", c.model.loss},
            {"precision", c.model.precision},
            {"activation_checkpointing", c.model.activation_checkpointing},
            {"recompute_every", c.model.recompute_every},
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
          {"trace_iterations", c.trace_iterations},
          {"system", to_json(c.system)}};
}

namespace {

WorkerModel worker_model_from(const json& model) {
  WorkerModel m;
  m.name = require<std::string>(model, "model.", "name");
  m.batch_size = require<long long>(model, "model.", "batch_size");
  m.input_shape = require<std::vector<long long>>(model, "model.", "input_shape");
  m.num_classes = read<long long>(model, "model.", "num_classes", 0);
  m.loss = read<std::string>(model, "model.", "loss", m.loss);
  m.precision = read<std::string>(model, "model.", "precision", m.precision);
  m.activation_checkpointing =
      read<std::string>(model, "model.", "activation_checkpointing", m.activation_checkpointing);
  if (m.activation_checkpointing != "none" && m.activation_checkpointing != "full" &&
      m.activation_checkpointing != "selective") {
    throw std::invalid_argument(
        "worker config: model.activation_checkpointing must be none, full or selective");
  }
  m.recompute_every = read<long long>(model, "model.", "recompute_every", 1);
  if (m.recompute_every < 1) {
    throw std::invalid_argument("worker config: model.recompute_every must be >= 1");
  }
  m.depth = read<long long>(model, "model.", "depth", 0);
  m.width = read<long long>(model, "model.", "width", 0);
  if (model.contains("moe")) {
    const json& moe = section(model, "moe");
    MoeShape& shape = m.moe;
    shape.experts = read<int64_t>(moe, "model.moe.", "experts", shape.experts);
    shape.top_k = read<int64_t>(moe, "model.moe.", "top_k", shape.top_k);
    shape.capacity_factor =
        read<double>(moe, "model.moe.", "capacity_factor", shape.capacity_factor);
    shape.every = read<int64_t>(moe, "model.moe.", "every", shape.every);
  }
  if (model.contains("decoder")) {
    const json& decoder = section(model, "decoder");
    DecoderShape& shape = m.decoder;
    shape.heads = read<int64_t>(decoder, "model.decoder.", "heads", 0);
    shape.kv_heads = read<int64_t>(decoder, "model.decoder.", "kv_heads", 0);
    shape.vocab = read<int64_t>(decoder, "model.decoder.", "vocab", 0);
  }
  return m;
}

}  // namespace

WorkerConfig worker_config_from_json(const json& d) {
  if (!d.is_object()) throw std::invalid_argument("worker config: expected a JSON object");
  WorkerConfig c;
  c.model = worker_model_from(section(d, "model"));
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
  c.trace_iterations = read<long long>(d, "", "trace_iterations", 1);
  c.system = parallel_system_from_json(section(d, "system"));
  return c;
}

}  // namespace runtime
