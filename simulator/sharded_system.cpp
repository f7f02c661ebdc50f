#include "simulator/sharded_system.h"

#include <numeric>
#include <stdexcept>

#include "simulator/data_parallel_system.h"

namespace harness::simulator {

baselines::ShardLayout shard_layout_of(const LayerCosts& costs, int world,
                                       runtime::ShardUnitKind unit) {
  std::vector<baselines::UnitParameters> units;
  for (int layer : costs.order) {
    if (costs.parameter_bytes[layer] <= 0) continue;
    const auto elements = static_cast<int64_t>(costs.parameter_bytes[layer] / 4);
    if (unit == runtime::ShardUnitKind::kLayer || units.empty()) {
      units.push_back({unit == runtime::ShardUnitKind::kLayer ? costs.ids[layer] : "model", {}});
    }
    units.back().numels.push_back(elements);
  }
  return baselines::make_shard_layout(units, world);
}

std::vector<std::pair<int, int>> unit_spans(const LayerCosts& costs, runtime::ShardUnitKind unit) {
  std::vector<int> starts;
  for (int p = 0; p < costs.size(); ++p) {
    if (costs.parameter_bytes[costs.order[p]] > 0) starts.push_back(p);
  }
  if (starts.empty()) return {};
  if (unit == runtime::ShardUnitKind::kModel) return {{0, costs.size() - 1}};
  starts.front() = 0;
  std::vector<std::pair<int, int>> spans;
  for (size_t u = 0; u < starts.size(); ++u) {
    spans.push_back({starts[u], u + 1 < starts.size() ? starts[u + 1] - 1 : costs.size() - 1});
  }
  return spans;
}

namespace {

struct Builder {
  const Cluster& cluster;
  const LayerCosts& costs;
  const ShardedSystem& system;
  ComputeNoise& noise;
  TaskGraph& graph;
  int group = 0;
  int n = 0;
  double scale = 1;
  std::vector<std::pair<int, int>> spans;
  std::vector<double> unit_bytes;                   // padded, fp32
  std::vector<std::vector<int>> forward, backward;  // [unit][rank]: the compute task

  int units() const { return static_cast<int>(spans.size()); }
  bool gathers_parameters() const { return system.stage == baselines::ZeroStage::kParameters; }

  double seconds(int u, const std::vector<double>& per_layer) const {
    double total = 0;
    for (int p = spans[u].first; p <= spans[u].second; ++p) total += per_layer[costs.order[p]];
    return total * scale;
  }
  int collective(int u, TaskCategory category, const std::vector<int>& after) {
    const int id = graph.add_collective(group, unit_bytes[u], u, category);
    for (int task : after) {
      if (task >= 0) graph.depend(id, task);
    }
    return id;
  }
  // When backward reaches unit k (the gradient of its output arrives): forward's end for the
  // last unit, the next unit's backward for the others.
  const std::vector<int>& reached(int k) const {
    return k + 1 == units() ? forward[k] : backward[k + 1];
  }

  void add_forward() {
    for (int u = 0; u < units(); ++u) {
      int gathered = -1;
      if (gathers_parameters()) {
        // Without prefetch a unit is gathered once the forward before it is done. With it the
        // runtime queues unit u's gather where forward enters unit u - 1, so it also waits for
        // unit u - 2's forward (and, by the channel's order, for the gather before it).
        const int waits_for = system.prefetch ? u - 2 : u - 1;
        gathered = collective(u, TaskCategory::kAllGather,
                              waits_for >= 0 ? forward[waits_for] : std::vector<int>{});
      }
      for (int r = 0; r < n; ++r) {
        forward[u][r] =
            graph.add_compute(r, TaskCategory::kForward, noise.apply(seconds(u, costs.forward_s)));
        if (gathered >= 0) graph.depend(forward[u][r], gathered);
      }
    }
  }

  // Backward unit by unit from the last; returns the last reduce-scatter.
  int add_backward() {
    std::vector<int> gather(units(), -1);
    if (gathers_parameters() && system.prefetch) {
      gather.back() = collective(units() - 1, TaskCategory::kAllGather, reached(units() - 1));
    }
    int scatter = -1;
    for (int k = units() - 1; k >= 0; --k) {
      if (gathers_parameters()) {
        // Prefetch: the unit before is queued where this one is reached; else when it is.
        if (!system.prefetch) gather[k] = collective(k, TaskCategory::kAllGather, reached(k));
        if (system.prefetch && k > 0)
          gather[k - 1] = collective(k - 1, TaskCategory::kAllGather, reached(k));
      }
      std::vector<int> ready(n);
      for (int r = 0; r < n; ++r) {
        backward[k][r] = graph.add_compute(r, TaskCategory::kBackward,
                                           noise.apply(seconds(k, costs.backward_s)));
        if (gather[k] >= 0) graph.depend(backward[k][r], gather[k]);
        ready[r] = backward[k][r];
        if (cluster.models_bucket_copies()) {  // the gradients copied into the unit's buffer
          ready[r] = graph.add_compute(r, TaskCategory::kBucketCopy,
                                       cluster.bucket_copy_seconds(unit_bytes[k]), -1, k);
        }
      }
      scatter = collective(k, TaskCategory::kReduceScatter, ready);
    }
    return scatter;
  }
};

}  // namespace

SimulatedIteration simulate_sharded(const Cluster& cluster, const LayerCosts& costs,
                                    const ShardedSystem& system, ComputeNoise& noise) {
  if (system.world < 1 || system.world > cluster.num_gpus()) {
    throw std::invalid_argument("world size outside the cluster");
  }
  const baselines::ShardLayout layout = shard_layout_of(costs, system.world, system.unit);
  if (system.stage == baselines::ZeroStage::kOptimizerState) {
    DataParallelSystem ddp;
    ddp.world = system.world;
    ddp.batch_per_rank = system.batch_per_rank;
    ddp.bucket_mb = system.bucket_mb;
    ddp.first_bucket_mb = system.first_bucket_mb;
    ddp.step_s = system.step_s / system.world;
    for (const auto& unit : layout.units)
      ddp.gathers_after_step.push_back(4.0 * unit.padded_elements);
    return simulate_data_parallel(cluster, costs, ddp, noise);
  }
  SimulatedIteration result;
  result.graph = TaskGraph(system.world);
  Builder b{cluster, costs, system, noise, result.graph};
  b.n = system.world;
  std::vector<int> ranks(static_cast<size_t>(b.n));
  std::iota(ranks.begin(), ranks.end(), 0);
  b.group = result.graph.add_group(ranks);
  b.scale = system.batch_per_rank / costs.profile_batch;
  b.spans = unit_spans(costs, system.unit);
  for (const auto& unit : layout.units) b.unit_bytes.push_back(4.0 * unit.padded_elements);
  b.forward.assign(b.units(), std::vector<int>(b.n, -1));
  b.backward.assign(b.units(), std::vector<int>(b.n, -1));
  b.add_forward();
  const int last_scatter = b.add_backward();
  std::vector<int> steps(b.n);
  for (int r = 0; r < b.n; ++r) {
    steps[r] =
        result.graph.add_compute(r, TaskCategory::kStep, noise.apply(system.step_s / system.world));
    if (last_scatter >= 0) result.graph.depend(steps[r], last_scatter);
  }
  if (system.stage == baselines::ZeroStage::kGradients) {  // the updated shards gathered
    for (int u = 0; u < b.units(); ++u) b.collective(u, TaskCategory::kAllGather, steps);
  }
  result.times = run_tasks(cluster, result.graph);
  result.ranks = rank_phases(result.graph, result.times);
  return result;
}

}  // namespace harness::simulator
