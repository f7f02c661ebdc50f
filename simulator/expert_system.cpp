#include "simulator/expert_system.h"

#include <cmath>
#include <numeric>
#include <stdexcept>

#include "simulator/data_parallel_system.h"

namespace harness::simulator {

LayerCosts dense_part(const LayerCosts& costs) {
  LayerCosts dense = costs;
  for (size_t layer = 0; layer < costs.mixtures.size(); ++layer) {
    dense.parameter_bytes[layer] -=
        static_cast<double>(costs.mixtures[layer].expert_parameter_bytes);
  }
  return dense;
}

MixtureExchange mixture_exchange(const LayerCosts& costs, int layer, double samples) {
  MixtureExchange exchange;
  if (costs.mixtures.empty() || costs.mixtures[layer].count == 0) return exchange;
  const runtime::LayerMixtures& m = costs.mixtures[layer];
  exchange.mixtures = m.count;
  exchange.count_bytes = 8.0 * static_cast<double>(m.experts);
  exchange.dispatch_bytes =
      static_cast<double>(m.dispatch_bytes) / m.count * samples / costs.profile_batch;
  return exchange;
}

namespace {

// One iteration's graph: each layer's compute on every rank, then the exchanges their threads
// wait in; the dense part's sum and the steps after backward.
class ExpertGraphBuilder {
 public:
  ExpertGraphBuilder(const Cluster& cluster, const LayerCosts& costs, const ExpertSystem& system,
                     ComputeNoise& noise, TaskGraph& graph)
      : cluster_(cluster),
        costs_(costs),
        dense_(dense_part(costs)),
        system_(system),
        noise_(noise),
        graph_(graph),
        scale_(system.batch_per_rank / costs.profile_batch) {
    std::vector<int> ranks(static_cast<size_t>(system.world));
    std::iota(ranks.begin(), ranks.end(), 0);
    group_ = graph.add_group(ranks);
    if (system.zero_stage < 2) {
      buckets_ = layer_buckets(dense_, system.first_bucket_mb, system.bucket_mb);
      cuts_ = bucket_cuts(dense_, buckets_);
    }
    ready_.assign(buckets_.size(), std::vector<int>(ranks.size(), -1));
    last_backward_.assign(ranks.size(), -1);
  }

  void add_forward() {
    for (int p = 0; p < costs_.size(); ++p) {
      const int layer = costs_.order[p];
      for (int r = 0; r < system_.world; ++r) {
        graph_.add_compute(r, TaskCategory::kForward,
                           noise_.apply(costs_.forward_s[layer] * scale_));
      }
      const MixtureExchange exchange = mixture_exchange(costs_, layer, system_.batch_per_rank);
      for (int m = 0; m < exchange.mixtures; ++m) {
        graph_.add_blocking_collective(group_, exchange.count_bytes, TaskCategory::kAllToAll);
        for (int pass = 0; pass < 2; ++pass) {  // dispatch, combine
          graph_.add_blocking_collective(group_, exchange.dispatch_bytes, TaskCategory::kAllToAll);
        }
      }
    }
  }

  void add_backward() {
    for (int p = costs_.size() - 1; p >= 0; --p) {
      const int layer = costs_.order[p];
      for (int r = 0; r < system_.world; ++r) {
        last_backward_[r] = graph_.add_compute(r, TaskCategory::kBackward,
                                               noise_.apply(costs_.backward_s[layer] * scale_));
        mark_buckets_ready(p, r);
      }
      const MixtureExchange exchange = mixture_exchange(costs_, layer, system_.batch_per_rank);
      for (int pass = 0; pass < 2 * exchange.mixtures; ++pass) {  // the combine's, the dispatch's
        const int exchanged = graph_.add_blocking_collective(group_, exchange.dispatch_bytes,
                                                             TaskCategory::kAllToAll);
        for (int& last : last_backward_) last = exchanged;
      }
    }
  }

  // The dense part summed (buckets, or a reduce-scatter of its flat gradient), every rank's step
  // over what it holds, and the sharded stages' gather of the updated chunks.
  void add_sum_and_steps() {
    const bool sharded = system_.zero_stage > 0 && system_.world > 1;
    const double dense = dense_.total_parameter_bytes();
    const double chunk = std::ceil(dense / 4 / system_.world) * 4;
    const int sum = sharded && system_.zero_stage >= 2 ? add_scatter(chunk * system_.world)
                    : system_.world > 1
                        ? add_bucket_collectives(graph_, cluster_, buckets_, group_,
                                                 system_.overlap, ready_, last_backward_)
                        : -1;
    const double total = costs_.total_parameter_bytes();
    const double held = (sharded ? chunk : dense) + (total - dense) / system_.world;
    std::vector<int> steps;
    for (int r = 0; r < system_.world; ++r) {
      steps.push_back(graph_.add_compute(
          r, TaskCategory::kStep, noise_.apply(total > 0 ? system_.step_s * held / total : 0)));
      if (sum >= 0) graph_.depend(steps.back(), sum);
    }
    if (!sharded) return;
    const int gather =
        graph_.add_collective(group_, chunk * system_.world, 0, TaskCategory::kAllGather);
    for (int step : steps) graph_.depend(gather, step);
  }

 private:
  // Bucket k is ready once backward has passed its earliest layer; in overlap mode its copy in
  // runs from the hook, right after.
  void mark_buckets_ready(int p, int r) {
    for (size_t k = 0; k < buckets_.size(); ++k) {
      if (cuts_[k] != p) continue;
      if (system_.overlap && cluster_.models_bucket_copies()) {
        last_backward_[r] = add_bucket_copy(graph_, cluster_, buckets_, r, k, 2);
      }
      ready_[k][r] = last_backward_[r];
    }
  }

  // Stages 2 and 3: the flat gradient (copied into its buffer where copies are priced)
  // reduce-scattered once every rank's backward is done.
  int add_scatter(double bytes) {
    const int scatter = graph_.add_collective(group_, bytes, 0, TaskCategory::kReduceScatter);
    for (int r = 0; r < system_.world; ++r) {
      int ready = last_backward_[r];
      if (cluster_.models_bucket_copies()) {
        ready = graph_.add_compute(r, TaskCategory::kBucketCopy,
                                   cluster_.bucket_copy_seconds(dense_.total_parameter_bytes()));
      }
      graph_.depend(scatter, ready);
    }
    return scatter;
  }

  const Cluster& cluster_;
  const LayerCosts& costs_;
  LayerCosts dense_;
  const ExpertSystem& system_;
  ComputeNoise& noise_;
  TaskGraph& graph_;
  double scale_;
  int group_ = 0;
  std::vector<LayerBucket> buckets_;
  std::vector<int> cuts_;
  std::vector<std::vector<int>> ready_;  // [bucket][rank]: the task after which it is ready
  std::vector<int> last_backward_;       // by rank: the last task of its backward
};

}  // namespace

SimulatedIteration simulate_expert_parallel(const Cluster& cluster, const LayerCosts& costs,
                                            const ExpertSystem& system, ComputeNoise& noise) {
  if (system.world < 1 || system.world > cluster.num_gpus()) {
    throw std::invalid_argument("world size outside the cluster");
  }
  bool mixtures = false;
  for (const runtime::LayerMixtures& m : costs.mixtures) mixtures |= m.count > 0;
  if (!mixtures) {
    throw std::invalid_argument(
        "the profile has no mixture of experts for expert parallelism to shard");
  }
  SimulatedIteration result;
  result.graph = TaskGraph(system.world);
  ExpertGraphBuilder builder(cluster, costs, system, noise, result.graph);
  builder.add_forward();
  builder.add_backward();
  builder.add_sum_and_steps();
  result.times = run_tasks(cluster, result.graph);
  result.ranks = rank_phases(result.graph, result.times);
  return result;
}

}  // namespace harness::simulator
