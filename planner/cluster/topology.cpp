#include "planner/cluster/topology.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <optional>
#include <string>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/limits.h"
#include "common/yaml_file.h"

#ifndef HARNESS_PLANNER_TOPOLOGY_DIR
#define HARNESS_PLANNER_TOPOLOGY_DIR "planner/topologies"
#endif

namespace harness::planner {
namespace {

[[noreturn]] void fail_at(const std::string& path, const YAML::Node& node,
                          const std::string& what) {
  const YAML::Mark mark = node.Mark();
  throw InputError(format_location(path, mark.line, mark.column) + ": " + what);
}

double positive_number(const std::string& path, const YAML::Node& node, const std::string& key) {
  if (!node.IsScalar()) fail_at(path, node, "'" + key + "' must be a number");
  double value = 0.0;
  try {
    value = node.as<double>();
  } catch (const YAML::Exception&) {
    fail_at(path, node, "'" + key + "' must be a number, got '" + node.Scalar() + "'");
  }
  if (!(value > 0.0) || !std::isfinite(value))
    fail_at(path, node, "'" + key + "' must be positive");
  return value;
}

}  // namespace

Topology load_topology(const std::string& path) {
  const std::optional<std::string> text = read_input_file(path);
  if (!text) throw InputError(path + ": cannot open topology file");
  // Bounded, and a key said twice is refused as in a spec.
  const YAML::Node root = parse_yaml_text(*text, path);
  if (!root.IsMap()) throw InputError(path + ":1:1: topology must be a mapping");
  Topology topology;
  topology.name = path;
  bool has_memory = false, has_bandwidth = false;
  for (const auto& entry : root) {
    if (!entry.first.IsScalar()) fail_at(path, entry.first, "a key must be a plain name");
    const std::string key = entry.first.Scalar();
    const YAML::Node& value = entry.second;
    if (key == "name") {
      if (!value.IsScalar()) fail_at(path, value, "'name' must be a string");
      topology.name = value.Scalar();
    } else if (key == "gpu_memory_bytes") {
      topology.gpu_memory_bytes = positive_number(path, value, key);
      has_memory = true;
    } else if (key == "bandwidth") {
      if (!value.IsMap()) fail_at(path, value, "'bandwidth' must be a mapping");
      bool seen[3] = {false, false, false};
      for (const auto& bw : value) {
        if (!bw.first.IsScalar()) fail_at(path, bw.first, "a key must be a plain name");
        const std::string bw_key = bw.first.Scalar();
        if (bw_key == "intra_machine") {
          topology.intra_machine_bandwidth = positive_number(path, bw.second, bw_key);
          seen[0] = true;
        } else if (bw_key == "inter_machine_p2p") {
          topology.inter_machine_p2p_bandwidth = positive_number(path, bw.second, bw_key);
          seen[1] = true;
        } else if (bw_key == "inter_machine_collective") {
          topology.inter_machine_collective_bandwidth = positive_number(path, bw.second, bw_key);
          seen[2] = true;
        } else if (bw_key == "intra_machine_collective") {  // optional
          topology.intra_machine_collective_bandwidth = positive_number(path, bw.second, bw_key);
        } else {
          fail_at(path, bw.first,
                  "unknown bandwidth key '" + bw_key +
                      "' (expected intra_machine, inter_machine_p2p, inter_machine_collective, "
                      "intra_machine_collective)");
        }
      }
      if (!seen[0] || !seen[1] || !seen[2]) {
        fail_at(path, value,
                "'bandwidth' needs intra_machine, inter_machine_p2p and inter_machine_collective");
      }
      has_bandwidth = true;
    } else if (key == "machines") {
      if (!value.IsSequence() || value.size() == 0) {
        fail_at(path, value, "'machines' must be a non-empty list of GPU counts per machine");
      }
      double total = 0;
      for (const auto& count : value) {
        const double c = positive_number(path, count, "machines");
        if (c != std::floor(c)) fail_at(path, count, "'machines' entries must be integers");
        total += c;
        if (total > kMaxGpus) {
          fail_at(path, count,
                  "'machines' add up to more than " + std::to_string(kMaxGpus) + " GPUs");
        }
        topology.gpus_per_machine.push_back(static_cast<int>(c));
      }
    } else {
      fail_at(path, entry.first,
              "unknown key '" + key + "' (expected name, gpu_memory_bytes, bandwidth, machines)");
    }
  }
  if (!has_memory) throw InputError(path + ":1:1: missing 'gpu_memory_bytes'");
  if (!has_bandwidth) throw InputError(path + ":1:1: missing 'bandwidth'");
  return topology;
}

std::string default_topology_path() {
  return std::string(HARNESS_PLANNER_TOPOLOGY_DIR) + "/v100_8x2.yaml";
}

}  // namespace harness::planner
