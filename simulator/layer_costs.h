// Per-layer costs of a model, from the same PipeDream profile `harness plan` reads: forward
// and backward seconds at the profile batch, output activation and parameter bytes. Compute
// time scales linearly with the samples a rank runs (as the planner assumes); activation
// bytes too; parameter bytes do not.
#pragma once

#include <string>
#include <vector>

#include "planner/model/profile_graph.h"
#include "runtime/profile/layer_profiler.h"
#include "simulator/compute_after_idle.h"

namespace harness::simulator {

struct LayerCosts {
  std::string source;
  double profile_batch = 1;
  std::vector<std::string> ids;    // "node12"
  std::vector<std::string> names;  // description
  std::vector<double> forward_s, backward_s, activation_bytes, parameter_bytes;
  std::vector<std::vector<int>> successors;
  std::vector<int> order;  // a topological order (the planner's)
  // Compute after a wait, where the profile measured it (add_after_idle): curves, and per
  // layer the index of its curve (-1: not measured; empty: no layer measured).
  std::vector<AfterIdleCurve> after_idle;
  std::vector<int> after_idle_of_layer;
  // A zero-bubble schedule's I and W per layer at the profile batch, where the profile timed
  // the backward split (add_backward_split); empty: not measured.
  std::vector<double> backward_input_s, backward_weight_s;
  // What each layer's forward keeps for its backward at the profile batch, where the profile
  // counted it (`harness profile estimate`); empty: not known.
  std::vector<double> stored_bytes;
  // What each layer's I leaves allocated until its W beyond stored_bytes (the gradients W reads),
  // at the profile batch, where the profile split the backward; empty: none counted.
  std::vector<double> weight_pending_bytes;
  // The most each layer's backward allocates above what it starts with (its gradients'
  // working memory), at the profile batch; empty: not counted.
  std::vector<double> backward_working_bytes;
  // Per layer, the mixtures of experts it holds (count 0: none), where the profile found them
  // (add_mixtures); empty: a dense model.
  std::vector<runtime::LayerMixtures> mixtures;

  int size() const { return static_cast<int>(ids.size()); }
  double total_forward_s() const;
  double total_backward_s() const;
  double total_parameter_bytes() const;
  // Index of a node id, -1 when absent.
  int index_of(const std::string& id) const;
  // The curve of a task that runs `layers` (mix_after_idle of theirs, weighted by their
  // times); empty where none of them was measured.
  AfterIdleCurve after_idle_of(const std::vector<int>& layers) const;
};

// Gives the layers at positions first..last of `order` (a profile's chain indexes: its
// layer ranges) the curve the profile measured for that range. Throws std::invalid_argument
// when the range is not within the layers.
void add_after_idle(LayerCosts& costs, int first, int last, AfterIdleCurve curve);

// Gives the layers at positions 0..n-1 of `order` their I and W (milliseconds, one per chain
// layer, as profile.json lists them). Throws std::invalid_argument when the counts are not the
// profile's layers or a time is negative.
void add_backward_split(LayerCosts& costs, const std::vector<double>& input_ms,
                        const std::vector<double>& weight_ms);

// What each layer holds, bytes at the profile batch in profile.json's order (positions 0..n-1
// of `order`); weight_pending and backward_working may be empty (not counted).
struct LayerHeldBytes {
  std::vector<double> stored;            // from its forward until its backward (or W)
  std::vector<double> weight_pending;    // from its I until its W, beyond `stored`
  std::vector<double> backward_working;  // the most its backward allocates above its start
};

// Gives the layers what they hold. Throws std::invalid_argument when a count is not the
// profile's layers or a size is negative.
void add_held_bytes(LayerCosts& costs, const LayerHeldBytes& held);

// Gives the layers their mixtures (profile.json's layers' `mixtures`, positions 0..n-1 of
// `order`; count 0 where a layer has none). Throws std::invalid_argument when the count is not
// the profile's layers or a layer's experts' bytes exceed its parameter bytes.
void add_mixtures(LayerCosts& costs, const std::vector<runtime::LayerMixtures>& by_position);

// From an already pruned graph (planner::prune_inputs_and_getitem_sinks).
LayerCosts layer_costs_from_graph(const planner::LayerGraph& pruned, double profile_batch);
// Reads, parses and prunes a profile file (InputError on malformed input).
LayerCosts load_layer_costs(const std::string& path, double profile_batch);

}  // namespace harness::simulator
