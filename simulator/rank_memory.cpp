#include "simulator/rank_memory.h"

#include <algorithm>
#include <numeric>

#include "simulator/expert_system.h"

namespace harness::simulator {

namespace {

constexpr double kAdamMoments = 2;

std::vector<int> all_layers(const LayerCosts& costs) {
  std::vector<int> layers(static_cast<size_t>(costs.size()));
  std::iota(layers.begin(), layers.end(), 0);
  return layers;
}

double parameter_bytes_of(const LayerCosts& costs, const std::vector<int>& layers) {
  double bytes = 0;
  for (const int layer : layers) bytes += costs.parameter_bytes.at(layer);
  return bytes;
}

// A stage's states on each of its replicas, ZeRO dividing them over the replicas.
RankMemory stage_states(const LayerCosts& costs, const PipelineStage& stage, int zero_stage) {
  const double bytes = parameter_bytes_of(costs, stage.layers);
  return sharded_over({bytes, bytes, kAdamMoments * bytes, std::nullopt},
                      std::max<double>(1, double(stage.ranks.size())), zero_stage);
}

// What a stage's micro-batch holds: from its forward until its backward (or W), from its I until
// its W on top, and while a backward part (B, I or W) runs, that part's working memory.
struct MicroBatchBytes {
  double stored = 0;
  double weight_pending = 0;
  double backward_working = 0;
};

// The most bytes of activations a position's actions hold at once.
double peak_live_bytes(const std::vector<runtime::PipelineAction>& actions,
                       const std::vector<MicroBatchBytes>& micro_batch_bytes) {
  using Kind = runtime::PipelineAction::Kind;
  double live = 0, peak = 0;
  for (const auto& action : actions) {
    const MicroBatchBytes& bytes = micro_batch_bytes.at(static_cast<size_t>(action.stage));
    const bool backward = action.kind == Kind::kBackward || action.kind == Kind::kBackwardInput ||
                          action.kind == Kind::kBackwardWeight;
    if (backward) peak = std::max(peak, live + bytes.backward_working);
    if (action.kind == Kind::kForward) peak = std::max(peak, live += bytes.stored);
    if (action.kind == Kind::kBackwardInput) peak = std::max(peak, live += bytes.weight_pending);
    if (action.kind == Kind::kBackward) live -= bytes.stored;
    if (action.kind == Kind::kBackwardWeight) live -= bytes.stored + bytes.weight_pending;
  }
  return peak;
}

// The layers' sum (or their largest, for working memory that one layer at a time uses) of
// `per_layer` at `samples`; 0 where the profile does not count it.
double layers_bytes(const LayerCosts& costs, const std::vector<double>& per_layer,
                    const std::vector<int>& layers, double samples, bool largest = false) {
  double bytes = 0;
  for (const int layer : layers) {
    if (per_layer.empty()) break;
    bytes = largest ? std::max(bytes, per_layer.at(layer)) : bytes + per_layer.at(layer);
  }
  return bytes * samples / costs.profile_batch;
}

}  // namespace

std::optional<double> stored_activations(const LayerCosts& costs, const std::vector<int>& layers,
                                         double samples) {
  if (costs.stored_bytes.empty()) return std::nullopt;
  return layers_bytes(costs, costs.stored_bytes, layers, samples);
}

RankMemory sharded_over(RankMemory held, double replicas, int zero_stage) {
  if (zero_stage >= 1) held.optimizer_state_bytes /= replicas;
  if (zero_stage >= 2) held.gradient_bytes /= replicas;
  if (zero_stage >= 3) held.parameter_bytes /= replicas;
  return held;
}

RankMemory replicated_memory(const LayerCosts& costs, double samples) {
  const double bytes = costs.total_parameter_bytes();
  const std::vector<int> layers = all_layers(costs);
  std::optional<double> activations = stored_activations(costs, layers, samples);
  // Its backward starts with every forward's bytes held; the largest layer's working memory on
  // top bounds the peak (a later layer's runs after the layers behind it freed theirs).
  if (activations) {
    *activations += layers_bytes(costs, costs.backward_working_bytes, layers, samples, true);
  }
  return {bytes, bytes, kAdamMoments * bytes, activations};
}

RankMemory expert_parallel_memory(const LayerCosts& costs, double samples, int world,
                                  int zero_stage) {
  RankMemory whole = replicated_memory(costs, samples);
  const double dense = dense_part(costs).total_parameter_bytes();
  const double experts = (whole.parameter_bytes - dense) / world;
  RankMemory held =
      sharded_over({dense, dense, kAdamMoments * dense, whole.activation_bytes}, world, zero_stage);
  held.parameter_bytes += experts;
  held.gradient_bytes += experts;
  held.optimizer_state_bytes += kAdamMoments * experts;
  return held;
}

RankMemory pipeline_memory(const LayerCosts& costs, const PipelineSystem& system, int zero_stage) {
  const runtime::ScheduleTable table = pipeline_schedule_of(system);
  const std::vector<int> positions = stage_positions(system);
  std::vector<MicroBatchBytes> micro_batch_bytes;
  std::vector<RankMemory> held(table.actions.size());
  for (size_t s = 0; s < system.stages.size(); ++s) {
    const PipelineStage& stage = system.stages[s];
    const double replicas = std::max<double>(1, double(stage.ranks.size()));
    const double samples = system.global_batch / system.micro_batches / replicas;
    micro_batch_bytes.push_back(
        {layers_bytes(costs, costs.stored_bytes, stage.layers, samples),
         layers_bytes(costs, costs.weight_pending_bytes, stage.layers, samples),
         layers_bytes(costs, costs.backward_working_bytes, stage.layers, samples, true)});
    const RankMemory states = stage_states(costs, stage, zero_stage);
    RankMemory& sum = held.at(static_cast<size_t>(positions[s]));
    sum.parameter_bytes += states.parameter_bytes;
    sum.gradient_bytes += states.gradient_bytes;
    sum.optimizer_state_bytes += states.optimizer_state_bytes;
  }
  RankMemory fullest;
  for (size_t p = 0; p < held.size(); ++p) {
    if (!costs.stored_bytes.empty()) {
      held[p].activation_bytes = peak_live_bytes(table.actions[p], micro_batch_bytes);
    }
    if (held[p].total() > fullest.total()) fullest = held[p];
  }
  return fullest;
}

}  // namespace harness::simulator
