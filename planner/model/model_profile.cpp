#include "planner/model/model_profile.h"

namespace harness::planner {

std::vector<int> ModelProfile::layers_of_stage(int first_state, int last_state) const {
  std::vector<int> layers;
  const NodeSet& upto = dag.states[last_state].downset;
  for (int v : upto.members()) {
    if (first_state > 0 && dag.states[first_state - 1].downset.contains(v)) continue;
    layers.push_back(v);
  }
  return layers;
}

void compute_state_totals(ModelProfile& profile) {
  const int count = profile.num_states();
  std::vector<double> compute(count), activation(count), parameters(count);
  profile.output_activation_bytes.assign(count, 0.0);
  for (int s = 0; s < count; ++s) {
    const AntichainState& state = profile.dag.states[s];
    for (int v : state.downset.members()) {
      const LayerNode& node = profile.graph.nodes[v];
      compute[s] += (node.forward_ms + node.backward_ms) / 1000.0;
      activation[s] += node.activation_bytes;
      parameters[s] += node.parameter_bytes;
    }
    for (int v : state.augmented_antichain) {
      profile.output_activation_bytes[s] += profile.graph.nodes[v].activation_bytes;
    }
  }
  profile.compute_s = CumulativeMatrix(std::move(compute));
  profile.activation_bytes = CumulativeMatrix(std::move(activation));
  profile.parameter_bytes = CumulativeMatrix(std::move(parameters));
}

ModelProfile prepare_model_profile(const LayerGraph& parsed) {
  ModelProfile profile;
  profile.source = parsed.source;
  profile.graph = prune_inputs_and_getitem_sinks(parsed);
  profile.dag = build_antichain_dag(profile.graph);
  compute_state_totals(profile);
  return profile;
}

ModelProfile import_profile(const std::string& path) {
  return prepare_model_profile(read_layer_graph(path));
}

}  // namespace harness::planner
