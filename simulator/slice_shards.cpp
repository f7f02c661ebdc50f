#include "simulator/slice_shards.h"

#include "simulator/sharded_system.h"

namespace harness::simulator {

SliceShards::SliceShards(const LayerCosts& costs, TaskGraph& graph, int group, int replicas,
                         int zero_stage)
    : costs_(costs),
      graph_(graph),
      group_(group),
      replicas_(replicas),
      zero_stage_(zero_stage),
      spans_(unit_spans(costs, runtime::ShardUnitKind::kLayer)) {
  const baselines::ShardLayout layout =
      shard_layout_of(costs, replicas, runtime::ShardUnitKind::kLayer);
  for (const auto& unit : layout.units) unit_bytes_.push_back(4.0 * unit.padded_elements);
}

int SliceShards::gather(int unit, const std::vector<int>& after) {
  const int id = graph_.add_collective(group_, unit_bytes_[unit], unit, TaskCategory::kAllGather);
  for (const int task : after) {
    if (task >= 0) graph_.depend(id, task);
  }
  return id;
}

void SliceShards::add_forward_gathers() {
  forward_gathers_.assign(static_cast<size_t>(units()), -1);
  if (zero_stage_ < 3) return;
  for (int u = 0; u < units(); ++u) forward_gathers_[u] = gather(u, {});
}

int SliceShards::forward_gather(int position) const {
  for (int u = 0; u < units() && !forward_gathers_.empty(); ++u) {
    if (position >= spans_[u].first && position <= spans_[u].second) return forward_gathers_[u];
  }
  return -1;
}

void SliceShards::forward_computed(int position, int task) {
  for (int u = 2; u < units() && !forward_gathers_.empty(); ++u) {
    if (spans_[u - 1].first - 1 == position && forward_gathers_[u] >= 0)
      graph_.depend(forward_gathers_[u], task);
  }
}

int SliceShards::reached(int k, int d, const std::vector<std::vector<int>>& backward,
                         const std::vector<int>& forward_end) const {
  return k + 1 == units() ? forward_end[d] : backward[d][spans_[k + 1].first];
}

int SliceShards::add_backward(const std::vector<std::vector<int>>& backward,
                              const std::vector<int>& forward_end) {
  if (zero_stage_ < 2 || units() == 0) return -1;
  const auto reached_by_all = [&](int k) {
    std::vector<int> tasks;
    for (int d = 0; d < replicas_; ++d) tasks.push_back(reached(k, d, backward, forward_end));
    return tasks;
  };
  std::vector<int> gathered(static_cast<size_t>(units()), -1);
  if (zero_stage_ == 3) gathered.back() = gather(units() - 1, reached_by_all(units() - 1));
  int scatter = -1;
  for (int k = units() - 1; k >= 0; --k) {
    if (zero_stage_ == 3 && k > 0) gathered[k - 1] = gather(k - 1, reached_by_all(k));
    std::vector<int> done;
    for (int d = 0; d < replicas_; ++d) {
      for (int p = spans_[k].first; p <= spans_[k].second && gathered[k] >= 0; ++p) {
        graph_.depend(backward[d][p], gathered[k]);
      }
      done.push_back(backward[d][spans_[k].first]);
    }
    scatter = graph_.add_collective(group_, unit_bytes_[k], k, TaskCategory::kReduceScatter);
    for (const int task : done) graph_.depend(scatter, task);
  }
  return scatter;
}

void SliceShards::add_gathers_after(const std::vector<int>& steps) {
  if (zero_stage_ != 1 && zero_stage_ != 2) return;
  for (int u = 0; u < units(); ++u) gather(u, steps);
}

}  // namespace harness::simulator
