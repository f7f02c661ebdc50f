#include "harness/results/model_flops.h"

#include <algorithm>
#include <numeric>

#include "common/statistics.h"
#include "runtime/models/model_catalog.h"

namespace harness {

using nlohmann::json;

std::vector<double> rank_iteration_flops(const std::vector<double>& layer_forward_flops,
                                         long long batch_size, long long world_size,
                                         const std::vector<runtime::StageAssignment>& stages,
                                         int tensor) {
  const double model_forward =
      std::accumulate(layer_forward_flops.begin(), layer_forward_flops.end(), 0.0);
  std::vector<double> flops(static_cast<size_t>(world_size), 3.0 * model_forward * batch_size);
  if (stages.empty()) return flops;
  const double global_batch = static_cast<double>(batch_size) * world_size;
  for (const auto& stage : stages) {
    double stage_forward = 0;
    for (int layer = stage.first_layer;
         layer <= stage.last_layer && layer < static_cast<int>(layer_forward_flops.size());
         ++layer) {
      stage_forward += layer_forward_flops[static_cast<size_t>(layer)];
    }
    const double samples = global_batch / std::max<size_t>(1, stage.ranks.size());
    for (int group : stage.ranks) {
      for (int rank = group * tensor; rank < (group + 1) * tensor; ++rank) {
        if (rank >= 0 && rank < world_size)
          flops[static_cast<size_t>(rank)] = 3.0 * stage_forward * samples / tensor;
      }
    }
  }
  return flops;
}

std::vector<double> hardware_iteration_flops(const std::vector<double>& layer_forward_flops,
                                             const std::vector<double>& recomputed_forward_flops,
                                             long long batch_size, long long world_size,
                                             const std::vector<runtime::StageAssignment>& stages,
                                             int tensor) {
  std::vector<double> again(layer_forward_flops.size(), 0.0);
  for (size_t i = 0; i < again.size() && i < recomputed_forward_flops.size(); ++i) {
    again[i] = recomputed_forward_flops[i];
  }
  std::vector<double> flops =
      rank_iteration_flops(layer_forward_flops, batch_size, world_size, stages, tensor);
  const std::vector<double> extra =
      rank_iteration_flops(again, batch_size, world_size, stages, tensor);
  for (size_t r = 0; r < flops.size(); ++r) flops[r] += extra[r] / 3;  // one forward, not three
  return flops;
}

std::vector<double> recomputed_forward_flops(const std::string& recompute, const std::string& model,
                                             int64_t depth, const runtime::MoeShape& moe,
                                             int64_t tokens, int64_t width,
                                             const std::vector<double>& layer_forward_flops,
                                             int64_t every) {
  if (recompute == "none") return {};
  const std::vector<bool> blocks = runtime::recomputed_layers(model, depth, moe, every);
  std::vector<double> again(blocks.size(), 0.0);
  const double core = 4.0 * static_cast<double>(tokens) * static_cast<double>(tokens) *
                      static_cast<double>(runtime::transformer_width(model, width));
  for (size_t i = 0; i < blocks.size(); ++i) {
    const bool block = i >= 1 && i <= static_cast<size_t>(runtime::transformer_depth(model, depth));
    if (recompute == "selective" && block) again[i] = core;
    if (recompute == "full" && blocks[i] && i < layer_forward_flops.size()) {
      again[i] = layer_forward_flops[i];
    }
  }
  return again;
}

json flops_json(const std::vector<double>& layer_forward_flops,
                const std::vector<double>& rank_flops,
                const std::vector<double>& hardware_rank_flops) {
  json out = {{"rule",
               "3 x forward FLOPs (matrix products and convolutions) per sample x the samples the "
               "rank processes per iteration"},
              {"layer_forward_flops_per_sample", layer_forward_flops},
              {"forward_flops_per_sample",
               std::accumulate(layer_forward_flops.begin(), layer_forward_flops.end(), 0.0)},
              {"iteration_flops_per_rank", rank_flops}};
  if (!hardware_rank_flops.empty()) {
    out["hardware_rule"] = "the model's FLOPs plus the forward FLOPs of the recomputed layers";
    out["hardware_iteration_flops_per_rank"] = hardware_rank_flops;
  }
  return out;
}

std::optional<double> rank_peak_gflops(const json& env, const std::string& precision) {
  const json machine = env.value("machine", json());
  if (!machine.is_object()) return std::nullopt;
  const std::string gemm_key = "gemm_" + precision;
  if (env.value("device", "cpu") != "cpu") {
    // Ranks on GPUs: GPU 0's GEMM in the ranks' math (`harness-rank machine` measures fp32,
    // tf32 and bf16 where it sees a GPU), shared by the ranks that share a GPU (Gloo, more ranks
    // than GPUs); the host CPU's figures are no roofline for them.
    const json gpu = machine.value("gpu", json());
    if (!gpu.is_object() || !gpu.value(gemm_key, json()).is_object()) return std::nullopt;
    const double gflops = gpu[gemm_key].value("gflops", 0.0);
    const long long gpus = std::max(1LL, gpu.value("count", 1LL));
    const long long world = std::max(1LL, env.value("world_size", 1LL));
    if (gflops <= 0) return std::nullopt;
    return gflops / static_cast<double>((world + gpus - 1) / gpus);
  }
  const json gemm = machine.value(gemm_key, json());
  if (!gemm.is_object()) return std::nullopt;
  const double one = gemm.value("gflops_one_core", 0.0), all = gemm.value("gflops_all_cores", 0.0);
  const double threads = env.value("threads_per_rank", 1);
  if (one <= 0) return std::nullopt;
  return all > 0 ? std::min(one * threads, all) : one * threads;
}

std::string trained_precision(const json& system_config) {
  if (!system_config.is_object()) return "fp32";
  const json model = system_config.value("model", json());
  return model.is_object() ? model.value("precision", "fp32") : "fp32";
}

std::optional<double> tokens_per_second(const json& system_config, long long world_size,
                                        double iteration_p50_ms) {
  if (!system_config.is_object() || !(iteration_p50_ms > 0) || world_size < 1) return std::nullopt;
  const json model = system_config.value("model", json());
  if (!model.is_object()) return std::nullopt;
  const runtime::ModelEntry* entry = runtime::find_model(model.value("name", ""));
  const json shape = model.value("input_shape", json());
  const json batch = model.value("batch_size", json());
  if (!entry || !entry->reads_tokens || !shape.is_array() || shape.size() != 1 ||
      !shape[0].is_number_integer() || !batch.is_number_integer()) {
    return std::nullopt;
  }
  const double tokens = batch.get<double>() * shape[0].get<double>() * double(world_size);
  return tokens / (iteration_p50_ms / 1000.0);
}

std::optional<Utilisation> utilisation(const json& flops, const std::vector<double>& iteration_ms,
                                       std::optional<double> peak_gflops_per_rank) {
  if (!flops.is_object() || iteration_ms.empty()) return std::nullopt;
  const auto per_rank = flops.value("iteration_flops_per_rank", std::vector<double>{});
  if (per_rank.empty()) return std::nullopt;
  Utilisation u;
  u.samples = iteration_ms.size();
  u.iteration_p50_ms = percentile(iteration_ms, 50);
  if (u.iteration_p50_ms <= 0) return std::nullopt;
  u.flops_per_rank = std::accumulate(per_rank.begin(), per_rank.end(), 0.0) / per_rank.size();
  u.gflops_per_rank = u.flops_per_rank / (u.iteration_p50_ms / 1e3) / 1e9;
  u.peak_gflops_per_rank = peak_gflops_per_rank;
  if (peak_gflops_per_rank && *peak_gflops_per_rank > 0) {
    u.mfu = u.gflops_per_rank / *peak_gflops_per_rank;
    const auto hardware = flops.value("hardware_iteration_flops_per_rank", std::vector<double>{});
    if (!hardware.empty()) {
      const double mean = std::accumulate(hardware.begin(), hardware.end(), 0.0) / hardware.size();
      u.hfu = mean / (u.iteration_p50_ms / 1e3) / 1e9 / *peak_gflops_per_rank;
    }
  }
  return u;
}

std::optional<Utilisation> system_utilisation(const json& env, const json& flops,
                                              const json& system_config,
                                              const std::vector<double>& iteration_ms) {
  const std::string precision = trained_precision(system_config);
  auto u = utilisation(flops, iteration_ms, rank_peak_gflops(env, precision));
  if (u) u->precision = precision;
  return u;
}

}  // namespace harness
