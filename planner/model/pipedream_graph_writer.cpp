#include "planner/model/pipedream_graph_writer.h"

#include <cstdio>

namespace harness {

std::string pipedream_graph(const std::vector<GraphLayer>& layers, int64_t input_bytes) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line,
                "node0 -- Input0 -- forward_compute_time=0.000, backward_compute_time=0.000, "
                "activation_size=%.1f, parameter_size=0.000\n",
                static_cast<double>(input_bytes));
  out += line;
  for (size_t i = 0; i < layers.size(); ++i) {
    const GraphLayer& layer = layers[i];
    // " -- " separates fields: keep it out of the description.
    std::string description = layer.kind + "(" + layer.name + ")";
    for (size_t at; (at = description.find(" -- ")) != std::string::npos;) {
      description.replace(at, 4, " - ");
    }
    std::snprintf(line, sizeof line,
                  "node%zu -- %s -- forward_compute_time=%.6f, backward_compute_time=%.6f, "
                  "activation_size=%.1f, parameter_size=%.1f\n",
                  i + 1, description.c_str(), layer.forward_ms, layer.backward_ms,
                  static_cast<double>(layer.activation_bytes),
                  static_cast<double>(layer.parameter_bytes));
    out += line;
  }
  for (size_t i = 0; i < layers.size(); ++i) {
    std::snprintf(line, sizeof line, "\tnode%zu -- node%zu\n", i, i + 1);
    out += line;
  }
  return out;
}

}  // namespace harness
