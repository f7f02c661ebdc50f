// The JSON form of a layer profile (what profile.json holds of the measurement) and the
// merge of a stage profile's parts into one profile of the whole model. Torch-free: the
// processes of `harness profile layers --stages` hand their parts over as this JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "runtime/profile/layer_profiler.h"

namespace harness {

nlohmann::json timing_stats_json(const runtime::TimingStats& stats);

// [{gap_ms, forward, backward}, ...]: a profile's (or a stage's) after-idle timings.
nlohmann::json after_idle_json(const std::vector<runtime::AfterIdleTiming>& timings);

// A layer's `mixtures` object {count, experts, expert_parameter_bytes, dispatch_bytes}, and the
// inverse (nlohmann::json's exceptions on a missing key or a wrong type).
nlohmann::json mixtures_json(const runtime::LayerMixtures& mixtures);
runtime::LayerMixtures mixtures_from_json(const nlohmann::json& doc);

// model, batch, input_shape, input_bytes, repetitions, threads, first_layer, chain_layers,
// untimed_runs, layers (one holding mixtures of experts with its `mixtures`), whole_model
// {forward, backward, step} and, where measured, after_idle.
nlohmann::json layer_profile_json(const runtime::LayerProfileResult& result);
// The inverse; nlohmann::json's exceptions on a missing key or a wrong type.
runtime::LayerProfileResult layer_profile_from_json(const nlohmann::json& doc);

// One profile of the whole model from the profiles of its consecutive layer ranges, in order:
// each layer as the range that ran it measured it; the whole model's forward, backward and
// step (and their percentiles) the sums of the ranges'. Throws std::invalid_argument where
// the ranges do not cover the model's layers in order or are of different models or batches.
runtime::LayerProfileResult merge_stage_profiles(
    const std::vector<runtime::LayerProfileResult>& stages);

}  // namespace harness
