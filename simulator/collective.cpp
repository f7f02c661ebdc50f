#include "simulator/collective.h"

#include <algorithm>
#include <limits>
#include <map>

namespace harness::simulator {
namespace {

// Collects the edges of one step and merges their links.
class StepEdges {
 public:
  explicit StepEdges(const Cluster& cluster) : cluster_(cluster) {}
  void add(int src, int dst) {
    scratch_.clear();
    cluster_.route(src, dst, scratch_);
    for (const LinkUse& use : scratch_) counts_[use.link] += use.edges;
    latency_ = std::max(latency_, cluster_.latency(src, dst));
    crosses_machines_ |= !cluster_.same_machine(src, dst);
    ++edges_;
  }
  CollectivePhase phase(int steps, double fraction) const {
    CollectivePhase phase;
    phase.steps = steps;
    phase.bytes_fraction = fraction;
    const double step_latency = cluster_.config().collective_step_latency_s;
    phase.latency_s = step_latency >= 0 ? step_latency : latency_;
    phase.edges = edges_;
    for (const auto& [link, count] : counts_) phase.links.push_back({link, count});
    const double inter = cluster_.config().inter_bandwidth;
    const double intra_collective = cluster_.config().intra_collective_bandwidth;
    if (crosses_machines_ && cluster_.nic_bandwidth() > inter) phase.rate_cap = inter;
    if (!crosses_machines_ && intra_collective > 0) phase.rate_cap = intra_collective;
    phase.crosses_machines = crosses_machines_;
    return phase;
  }
  bool empty() const { return edges_ == 0; }

 private:
  const Cluster& cluster_;
  std::vector<LinkUse> scratch_;
  std::map<int, double> counts_;
  double latency_ = 0.0;
  int edges_ = 0;
  bool crosses_machines_ = false;
};

void add_ring(StepEdges& edges, const std::vector<int>& ring) {
  const size_t n = ring.size();
  if (n < 2) return;
  for (size_t i = 0; i < n; ++i) edges.add(ring[i], ring[(i + 1) % n]);
}

std::vector<CollectivePhase> ring_phases(const Cluster& cluster, const std::vector<int>& ranks) {
  const int n = static_cast<int>(ranks.size());
  StepEdges edges(cluster);
  add_ring(edges, ranks);
  return {edges.phase(2 * (n - 1), 1.0 / n)};
}

std::vector<CollectivePhase> tree_phases(const Cluster& cluster, const std::vector<int>& ranks) {
  const int n = static_cast<int>(ranks.size());
  int depth = 0;  // of the deepest node, heap order: node i has parent (i - 1) / 2
  for (int i = n - 1; i > 0; i = (i - 1) / 2) ++depth;
  auto level_of = [](int i) {
    int level = 0;
    for (; i > 0; i = (i - 1) / 2) ++level;
    return level;
  };
  std::vector<CollectivePhase> phases;
  for (int level = depth; level >= 1; --level) {  // reduce: children send to parents
    StepEdges edges(cluster);
    for (int i = 1; i < n; ++i) {
      if (level_of(i) == level) edges.add(ranks[i], ranks[(i - 1) / 2]);
    }
    phases.push_back(edges.phase(1, 1.0));
  }
  for (int level = 1; level <= depth; ++level) {  // broadcast: parents send to children
    StepEdges edges(cluster);
    for (int i = 1; i < n; ++i) {
      if (level_of(i) == level) edges.add(ranks[(i - 1) / 2], ranks[i]);
    }
    phases.push_back(edges.phase(1, 1.0));
  }
  return phases;
}

std::vector<CollectivePhase> hierarchical_phases(const Cluster& cluster,
                                                 const std::vector<int>& ranks) {
  std::map<int, std::vector<int>> by_machine;
  for (int r : ranks) by_machine[cluster.machine_of(r)].push_back(r);
  const int machines = static_cast<int>(by_machine.size());
  const int local = static_cast<int>(by_machine.begin()->second.size());
  bool uniform = true;
  for (const auto& [m, gpus] : by_machine) uniform &= static_cast<int>(gpus.size()) == local;
  if (!uniform || machines < 2 || local < 2) return ring_phases(cluster, ranks);

  std::vector<CollectivePhase> phases;
  StepEdges inside(cluster);
  for (const auto& [m, gpus] : by_machine) add_ring(inside, gpus);
  phases.push_back(inside.phase(local - 1, 1.0 / local));  // reduce-scatter
  StepEdges across(cluster);
  for (int j = 0; j < local; ++j) {
    std::vector<int> ring;
    for (const auto& [m, gpus] : by_machine) ring.push_back(gpus[j]);
    add_ring(across, ring);
  }
  phases.push_back(across.phase(2 * (machines - 1), 1.0 / (local * machines)));
  phases.push_back(inside.phase(local - 1, 1.0 / local));  // all-gather
  return phases;
}

}  // namespace

std::vector<CollectivePhase> plan_allreduce(const Cluster& cluster, const std::vector<int>& ranks,
                                            CollectiveAlgorithm algorithm) {
  if (ranks.size() < 2) return {};
  switch (algorithm) {
    case CollectiveAlgorithm::kRing:
      return ring_phases(cluster, ranks);
    case CollectiveAlgorithm::kTree:
      return tree_phases(cluster, ranks);
    case CollectiveAlgorithm::kHierarchicalRing:
      return hierarchical_phases(cluster, ranks);
  }
  return {};
}

std::vector<CollectivePhase> plan_ring_half(const Cluster& cluster, const std::vector<int>& ranks,
                                            RingHalf op) {
  const int n = static_cast<int>(ranks.size());
  if (n < 2) return {};
  StepEdges edges(cluster);
  add_ring(edges, ranks);
  CollectivePhase phase = edges.phase(n - 1, 1.0 / n);
  const ClusterConfig& config = cluster.config();
  const double measured =
      (op == RingHalf::kAllGather ? config.gather : config.scatter).step_latency_s;
  if (measured >= 0) phase.latency_s = measured;
  return {phase};
}

std::vector<CollectivePhase> plan_all_to_all(const Cluster& cluster,
                                             const std::vector<int>& ranks) {
  const int n = static_cast<int>(ranks.size());
  std::vector<CollectivePhase> phases;
  const double measured = cluster.config().alltoall.step_latency_s;
  for (int shift = 1; shift < n; ++shift) {
    StepEdges edges(cluster);
    for (int i = 0; i < n; ++i) edges.add(ranks[i], ranks[(i + shift) % n]);
    phases.push_back(edges.phase(1, 1.0 / n));
    if (measured >= 0) phases.back().latency_s = measured;
  }
  return phases;
}

double idle_allreduce_seconds(const Cluster& cluster, const std::vector<int>& ranks,
                              CollectiveAlgorithm algorithm, double bytes) {
  const std::vector<double> bandwidth = cluster.link_bandwidths();
  double total = 0.0;
  for (const CollectivePhase& phase : plan_allreduce(cluster, ranks, algorithm)) {
    const double cap = tighter_cap(cluster.config().collective_rate_cap, phase.rate_cap);
    double rate = cap > 0 ? cap : std::numeric_limits<double>::infinity();
    for (const LinkUse& use : phase.links) rate = std::min(rate, bandwidth[use.link] / use.edges);
    total += phase.steps * (phase.latency_s + phase.bytes_fraction * bytes / rate);
  }
  return total;
}

}  // namespace harness::simulator
