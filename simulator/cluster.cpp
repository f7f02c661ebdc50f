#include "simulator/cluster.h"

#include <cmath>

#include <algorithm>
#include <stdexcept>

namespace harness::simulator {

const char* to_string(CollectiveAlgorithm algorithm) {
  switch (algorithm) {
    case CollectiveAlgorithm::kRing:
      return "ring";
    case CollectiveAlgorithm::kTree:
      return "tree";
    case CollectiveAlgorithm::kHierarchicalRing:
      return "hierarchical";
  }
  return "?";
}

bool parse_collective_algorithm(const std::string& text, CollectiveAlgorithm& out) {
  for (auto a : {CollectiveAlgorithm::kRing, CollectiveAlgorithm::kTree,
                 CollectiveAlgorithm::kHierarchicalRing}) {
    if (text == to_string(a)) {
      out = a;
      return true;
    }
  }
  return false;
}

int ClusterConfig::num_gpus() const {
  int total = 0;
  for (int g : gpus_per_machine) total += g;
  return total;
}

std::vector<int> ClusterConfig::machines_for(int world, int gpus_per_machine) {
  if (world < 1 || gpus_per_machine < 1) throw std::invalid_argument("empty cluster");
  std::vector<int> machines(static_cast<size_t>(world / gpus_per_machine), gpus_per_machine);
  if (world % gpus_per_machine != 0) machines.push_back(world % gpus_per_machine);
  return machines;
}

Cluster::Cluster(ClusterConfig config) : config_(std::move(config)) {
  for (int m = 0; m < num_machines(); ++m) {
    if (config_.gpus_per_machine[m] < 1) throw std::invalid_argument("machine without GPUs");
    for (int g = 0; g < config_.gpus_per_machine[m]; ++g) machine_of_.push_back(m);
  }
  if (machine_of_.empty()) throw std::invalid_argument("cluster without GPUs");
  if (!(config_.intra_bandwidth > 0) || !(config_.inter_bandwidth > 0) ||
      !(config_.intra_collective_bandwidth >= 0)) {
    throw std::invalid_argument("bandwidths must be positive");
  }
  if (config_.p2p_half_duplex && num_gpus() > ClusterConfig::kMaxHalfDuplexGpus) {
    throw std::invalid_argument("half-duplex point-to-point pairs: at most " +
                                std::to_string(ClusterConfig::kMaxHalfDuplexGpus) + " GPUs");
  }
  if (!(config_.cpu_cores_per_machine >= 0) || !(config_.cores_per_rank > 0) ||
      !(config_.comm_cores_per_rank > 0) || !(config_.intra_comm_cores_per_rank >= 0)) {
    throw std::invalid_argument("CPU cores must be positive (0: not shared)");
  }
  if (config_.machines_per_host < 1) {
    throw std::invalid_argument("a host holds at least one machine");
  }
  for (const auto* calls : {&config_.inter_send_call, &config_.intra_send_call}) {
    for (size_t i = 0; i < calls->size(); ++i) {
      const auto& [bytes, seconds] = (*calls)[i];
      if (!(bytes >= 0) || !(seconds >= 0) || (i > 0 && !(bytes > (*calls)[i - 1].first))) {
        throw std::invalid_argument("send calls: sizes ascending, sizes and times not negative");
      }
    }
  }
}

double Cluster::send_call_seconds(int src, int dst, double bytes) const {
  const auto& calls = same_machine(src, dst) ? config_.intra_send_call : config_.inter_send_call;
  if (calls.empty()) return 0.0;
  if (bytes <= calls.front().first) return calls.front().second;
  if (bytes >= calls.back().first) return calls.back().second;
  const auto above = std::upper_bound(calls.begin(), calls.end(), bytes,
                                      [](double b, const auto& call) { return b < call.first; });
  const auto below = above - 1;
  const double share = (bytes - below->first) / (above->first - below->first);
  return below->second + share * (above->second - below->second);
}

std::vector<double> Cluster::link_bandwidths() const {
  std::vector<double> bandwidth(static_cast<size_t>(link_count()));
  for (int g = 0; g < num_gpus(); ++g) {
    bandwidth[gpu_out(g)] = bandwidth[gpu_in(g)] = config_.intra_bandwidth;
  }
  for (int m = 0; m < num_machines(); ++m) {
    bandwidth[nic_out(m)] = bandwidth[nic_in(m)] = nic_bandwidth();
    bandwidth[cpu_link(m)] = config_.cpu_cores_per_machine;
  }
  if (config_.p2p_half_duplex) {
    const double pair =
        config_.inter_p2p_bandwidth > 0 ? config_.inter_p2p_bandwidth : config_.inter_bandwidth;
    for (int a = 0; a < num_gpus(); ++a) {
      for (int b = a + 1; b < num_gpus(); ++b) bandwidth[pair_link(a, b)] = pair;
    }
  }
  return bandwidth;
}

void Cluster::route(int src, int dst, std::vector<LinkUse>& out) const {
  out.push_back({gpu_out(src), 1});
  if (!same_machine(src, dst)) {
    out.push_back({nic_out(machine_of(src)), 1});
    out.push_back({nic_in(machine_of(dst)), 1});
  }
  out.push_back({gpu_in(dst), 1});
}

void Cluster::route_p2p(int src, int dst, std::vector<LinkUse>& out) const {
  route(src, dst, out);
  if (config_.p2p_half_duplex && !same_machine(src, dst)) out.push_back({pair_link(src, dst), 1});
}

std::string Cluster::describe() const {
  const auto& m = config_.gpus_per_machine;
  bool uniform = true;
  for (int g : m) uniform &= g == m.front();
  if (uniform) {
    return std::to_string(m.size()) + " machine" + (m.size() == 1 ? "" : "s") + " x " +
           std::to_string(m.front()) + " GPU" + (m.front() == 1 ? "" : "s");
  }
  std::string text = "[";
  for (size_t i = 0; i < m.size(); ++i) text += (i ? "," : "") + std::to_string(m[i]);
  return text + "]";
}

double ClusterConfig::rate_at(const std::vector<std::pair<double, double>>& rates, double bytes) {
  if (rates.empty()) return 0.0;
  if (bytes <= rates.front().first) return rates.front().second;
  if (bytes >= rates.back().first) return rates.back().second;
  size_t i = 1;
  while (rates[i].first < bytes) ++i;
  const auto& [low_bytes, low_rate] = rates[i - 1];
  const auto& [high_bytes, high_rate] = rates[i];
  const double t = std::log(bytes / low_bytes) / std::log(high_bytes / low_bytes);
  return low_rate + t * (high_rate - low_rate);
}

}  // namespace harness::simulator
