#include "simulator/layer_costs.h"

#include <stdexcept>
#include <string>

namespace harness::simulator {

double LayerCosts::total_forward_s() const {
  double total = 0;
  for (double t : forward_s) total += t;
  return total;
}
double LayerCosts::total_backward_s() const {
  double total = 0;
  for (double t : backward_s) total += t;
  return total;
}
double LayerCosts::total_parameter_bytes() const {
  double total = 0;
  for (double b : parameter_bytes) total += b;
  return total;
}
int LayerCosts::index_of(const std::string& id) const {
  for (int i = 0; i < size(); ++i) {
    if (ids[i] == id) return i;
  }
  return -1;
}

AfterIdleCurve LayerCosts::after_idle_of(const std::vector<int>& layers) const {
  if (after_idle.empty()) return {};
  std::vector<const AfterIdleCurve*> curves;
  std::vector<double> forward, backward;
  for (int layer : layers) {
    const int curve = after_idle_of_layer[layer];
    curves.push_back(curve >= 0 ? &after_idle[curve] : nullptr);
    forward.push_back(forward_s[layer]);
    backward.push_back(backward_s[layer]);
  }
  return mix_after_idle(curves, forward, backward);
}

void add_after_idle(LayerCosts& costs, int first, int last, AfterIdleCurve curve) {
  if (first < 0 || first > last || last >= costs.size()) {
    throw std::invalid_argument("after_idle: layers " + std::to_string(first) + "-" +
                                std::to_string(last) + " are not within the profile's " +
                                std::to_string(costs.size()) + " layers");
  }
  costs.after_idle_of_layer.resize(static_cast<size_t>(costs.size()), -1);
  costs.after_idle.push_back(std::move(curve));
  for (int position = first; position <= last; ++position) {
    costs.after_idle_of_layer[costs.order[position]] =
        static_cast<int>(costs.after_idle.size()) - 1;
  }
}

void add_backward_split(LayerCosts& costs, const std::vector<double>& input_ms,
                        const std::vector<double>& weight_ms) {
  if (input_ms.size() != static_cast<size_t>(costs.size()) || weight_ms.size() != input_ms.size()) {
    throw std::invalid_argument("the split backward times " + std::to_string(input_ms.size()) +
                                " layers, the profile has " + std::to_string(costs.size()));
  }
  costs.backward_input_s.assign(input_ms.size(), 0.0);
  costs.backward_weight_s.assign(input_ms.size(), 0.0);
  for (size_t position = 0; position < input_ms.size(); ++position) {
    if (!(input_ms[position] >= 0) || !(weight_ms[position] >= 0)) {
      throw std::invalid_argument("the split backward of layer " + std::to_string(position) +
                                  " is not a time >= 0");
    }
    costs.backward_input_s[costs.order[position]] = input_ms[position] / 1000.0;
    costs.backward_weight_s[costs.order[position]] = weight_ms[position] / 1000.0;
  }
}

namespace {

// `bytes` (profile.json's order) in the costs' layer order; `what` names them in errors.
std::vector<double> bytes_by_layer(const LayerCosts& costs, const std::vector<double>& bytes,
                                   const std::string& what) {
  if (bytes.size() != static_cast<size_t>(costs.size())) {
    throw std::invalid_argument("the " + what + " cover " + std::to_string(bytes.size()) +
                                " layers, the profile has " + std::to_string(costs.size()));
  }
  std::vector<double> ordered(bytes.size(), 0.0);
  for (size_t position = 0; position < bytes.size(); ++position) {
    if (!(bytes[position] >= 0)) {
      throw std::invalid_argument("layer " + std::to_string(position) + "'s " + what + ": " +
                                  std::to_string(bytes[position]));
    }
    ordered[costs.order[position]] = bytes[position];
  }
  return ordered;
}

}  // namespace

void add_held_bytes(LayerCosts& costs, const LayerHeldBytes& held) {
  costs.stored_bytes = bytes_by_layer(costs, held.stored, "stored bytes");
  const auto optional = [&](const std::vector<double>& bytes, const char* what) {
    return bytes.empty() ? std::vector<double>{} : bytes_by_layer(costs, bytes, what);
  };
  costs.weight_pending_bytes = optional(held.weight_pending, "weight pending bytes");
  costs.backward_working_bytes = optional(held.backward_working, "backward working bytes");
}

void add_mixtures(LayerCosts& costs, const std::vector<runtime::LayerMixtures>& by_position) {
  if (by_position.size() != static_cast<size_t>(costs.size())) {
    throw std::invalid_argument("the mixtures cover " + std::to_string(by_position.size()) +
                                " layers, the profile has " + std::to_string(costs.size()));
  }
  costs.mixtures.assign(by_position.size(), {});
  for (size_t position = 0; position < by_position.size(); ++position) {
    const runtime::LayerMixtures& m = by_position[position];
    const int layer = costs.order[position];
    if (m.count < 0 || m.dispatch_bytes < 0 || m.expert_parameter_bytes < 0 ||
        static_cast<double>(m.expert_parameter_bytes) > costs.parameter_bytes[layer]) {
      throw std::invalid_argument("layer " + std::to_string(position) +
                                  "'s mixtures: their experts' bytes are not within the layer's "
                                  "parameter bytes, or a count is negative");
    }
    costs.mixtures[layer] = m;
  }
}

LayerCosts layer_costs_from_graph(const planner::LayerGraph& pruned, double profile_batch) {
  LayerCosts costs;
  costs.source = pruned.source;
  costs.profile_batch = profile_batch;
  for (const planner::LayerNode& node : pruned.nodes) {
    costs.ids.push_back(node.id);
    costs.names.push_back(node.description);
    costs.forward_s.push_back(node.forward_ms / 1000.0);
    costs.backward_s.push_back(node.backward_ms / 1000.0);
    costs.activation_bytes.push_back(node.activation_bytes);
    costs.parameter_bytes.push_back(node.parameter_bytes);
  }
  costs.successors = pruned.successors;
  costs.order = planner::topological_order(pruned);
  return costs;
}

LayerCosts load_layer_costs(const std::string& path, double profile_batch) {
  return layer_costs_from_graph(
      planner::prune_inputs_and_getitem_sinks(planner::read_layer_graph(path)), profile_batch);
}

}  // namespace harness::simulator
