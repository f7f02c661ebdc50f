#include "runtime/profile/layer_profile_json.h"

#include <stdexcept>
#include <string>

namespace harness {

using nlohmann::json;

json timing_stats_json(const runtime::TimingStats& stats) {
  return {{"median_ms", stats.median_ms}, {"p10_ms", stats.p10_ms}, {"p90_ms", stats.p90_ms}};
}

namespace {

runtime::TimingStats timing_stats_from_json(const json& doc) {
  return {doc.at("median_ms").get<double>(), doc.at("p10_ms").get<double>(),
          doc.at("p90_ms").get<double>()};
}

runtime::TimingStats sum_of(const runtime::TimingStats& a, const runtime::TimingStats& b) {
  return {a.median_ms + b.median_ms, a.p10_ms + b.p10_ms, a.p90_ms + b.p90_ms};
}

}  // namespace

json after_idle_json(const std::vector<runtime::AfterIdleTiming>& timings) {
  json doc = json::array();
  for (const auto& t : timings) {
    doc.push_back({{"gap_ms", t.gap_ms},
                   {"forward", timing_stats_json(t.forward)},
                   {"backward", timing_stats_json(t.backward)}});
  }
  return doc;
}

json mixtures_json(const runtime::LayerMixtures& m) {
  return {{"count", m.count},
          {"experts", m.experts},
          {"expert_parameter_bytes", m.expert_parameter_bytes},
          {"dispatch_bytes", m.dispatch_bytes}};
}

runtime::LayerMixtures mixtures_from_json(const json& doc) {
  return {doc.at("count").get<int>(), doc.at("experts").get<int64_t>(),
          doc.at("expert_parameter_bytes").get<int64_t>(), doc.at("dispatch_bytes").get<int64_t>()};
}

json layer_profile_json(const runtime::LayerProfileResult& result) {
  json layers = json::array();
  for (const auto& l : result.layers) {
    json layer = {{"name", l.name},
                  {"kind", l.kind},
                  {"forward", timing_stats_json(l.forward)},
                  {"backward", timing_stats_json(l.backward)},
                  {"activation_bytes", l.activation_bytes},
                  {"parameter_bytes", l.parameter_bytes}};
    if (l.backward_input) layer["backward_input"] = timing_stats_json(*l.backward_input);
    if (l.backward_weight) layer["backward_weight"] = timing_stats_json(*l.backward_weight);
    if (l.stored_bytes) layer["stored_bytes"] = *l.stored_bytes;
    if (l.weight_pending_bytes) layer["weight_pending_bytes"] = *l.weight_pending_bytes;
    if (l.backward_working_bytes) layer["backward_working_bytes"] = *l.backward_working_bytes;
    if (l.mixtures) layer["mixtures"] = mixtures_json(*l.mixtures);
    layers.push_back(std::move(layer));
  }
  json doc = {{"model", result.model},
              {"batch", result.batch},
              {"input_shape", result.input_shape},
              {"input_bytes", result.input_bytes},
              {"repetitions", result.repetitions},
              {"threads", result.threads},
              {"tensor", result.tensor},
              {"vocabulary_parallel", result.vocabulary_parallel},
              {"activation_checkpointing", result.activation_checkpointing},
              {"recompute_every", result.recompute_every},
              {"optimizer", result.optimizer},
              {"first_layer", result.first_layer},
              {"chain_layers", result.chain_layers},
              {"untimed_runs", result.untimed_runs},
              {"layers", layers},
              {"whole_model",
               {{"forward", timing_stats_json(result.whole_forward)},
                {"backward", timing_stats_json(result.whole_backward)},
                {"step", timing_stats_json(result.whole_step)}}}};
  if (!result.after_idle.empty()) doc["after_idle"] = after_idle_json(result.after_idle);
  return doc;
}

runtime::LayerProfileResult layer_profile_from_json(const json& doc) {
  runtime::LayerProfileResult result;
  result.model = doc.at("model").get<std::string>();
  result.batch = doc.at("batch").get<int64_t>();
  result.input_shape = doc.at("input_shape").get<std::vector<int64_t>>();
  result.input_bytes = doc.at("input_bytes").get<int64_t>();
  result.repetitions = doc.at("repetitions").get<int>();
  result.threads = doc.at("threads").get<int>();
  result.tensor = doc.value("tensor", 1);
  result.vocabulary_parallel = doc.value("vocabulary_parallel", false);
  result.activation_checkpointing = doc.value("activation_checkpointing", "none");
  result.recompute_every = doc.value("recompute_every", int64_t{1});
  result.optimizer = doc.value("optimizer", "sgd");
  result.first_layer = doc.at("first_layer").get<int>();
  result.chain_layers = doc.at("chain_layers").get<int>();
  result.untimed_runs = doc.at("untimed_runs").get<int>();
  for (const auto& l : doc.at("layers")) {
    runtime::LayerTiming timing;
    timing.name = l.at("name").get<std::string>();
    timing.kind = l.at("kind").get<std::string>();
    timing.forward = timing_stats_from_json(l.at("forward"));
    timing.backward = timing_stats_from_json(l.at("backward"));
    if (l.contains("backward_input")) {
      timing.backward_input = timing_stats_from_json(l.at("backward_input"));
      timing.backward_weight = timing_stats_from_json(l.at("backward_weight"));
    }
    timing.activation_bytes = l.at("activation_bytes").get<int64_t>();
    timing.parameter_bytes = l.at("parameter_bytes").get<int64_t>();
    if (l.contains("stored_bytes")) timing.stored_bytes = l.at("stored_bytes").get<int64_t>();
    if (l.contains("weight_pending_bytes")) {
      timing.weight_pending_bytes = l.at("weight_pending_bytes").get<int64_t>();
    }
    if (l.contains("backward_working_bytes")) {
      timing.backward_working_bytes = l.at("backward_working_bytes").get<int64_t>();
    }
    if (l.contains("mixtures")) timing.mixtures = mixtures_from_json(l.at("mixtures"));
    result.layers.push_back(timing);
  }
  const json& whole = doc.at("whole_model");
  result.whole_forward = timing_stats_from_json(whole.at("forward"));
  result.whole_backward = timing_stats_from_json(whole.at("backward"));
  result.whole_step = timing_stats_from_json(whole.at("step"));
  if (doc.contains("after_idle")) {
    for (const auto& t : doc.at("after_idle")) {
      result.after_idle.push_back({t.at("gap_ms").get<double>(),
                                   timing_stats_from_json(t.at("forward")),
                                   timing_stats_from_json(t.at("backward"))});
    }
  }
  return result;
}

runtime::LayerProfileResult merge_stage_profiles(
    const std::vector<runtime::LayerProfileResult>& stages) {
  if (stages.empty()) throw std::invalid_argument("no stage profiles to merge");
  runtime::LayerProfileResult merged = stages.front();
  merged.layers.clear();
  merged.whole_forward = merged.whole_backward = merged.whole_step = {};
  merged.after_idle.clear();  // each stage's own stays with the stage (profile.json's stages)
  merged.first_layer = 0;
  merged.untimed_runs = 0;
  for (size_t s = 0; s < stages.size(); ++s) {
    const auto& stage = stages[s];
    const std::string which = "stage " + std::to_string(s);
    if (stage.model != merged.model || stage.batch != merged.batch ||
        stage.chain_layers != merged.chain_layers) {
      throw std::invalid_argument(which + " profiled " + stage.model + " at batch " +
                                  std::to_string(stage.batch) + ", stage 0 " + merged.model +
                                  " at batch " + std::to_string(merged.batch));
    }
    const int next = static_cast<int>(merged.layers.size());
    if (stage.first_layer != next || stage.layers.empty()) {
      throw std::invalid_argument(which + " starts at layer " + std::to_string(stage.first_layer) +
                                  " with " + std::to_string(stage.layers.size()) +
                                  " layers; expected a range from layer " + std::to_string(next));
    }
    merged.layers.insert(merged.layers.end(), stage.layers.begin(), stage.layers.end());
    merged.whole_forward = sum_of(merged.whole_forward, stage.whole_forward);
    merged.whole_backward = sum_of(merged.whole_backward, stage.whole_backward);
    merged.whole_step = sum_of(merged.whole_step, stage.whole_step);
    merged.untimed_runs += stage.untimed_runs;
  }
  if (static_cast<int>(merged.layers.size()) != merged.chain_layers) {
    throw std::invalid_argument("the stages end at layer " +
                                std::to_string(merged.layers.size() - 1) + " of the model's 0-" +
                                std::to_string(merged.chain_layers - 1));
  }
  return merged;
}

}  // namespace harness
