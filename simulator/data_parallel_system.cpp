#include "simulator/data_parallel_system.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "baselines/ddp/bucket_assignment.h"

namespace harness::simulator {

std::vector<LayerBucket> layer_buckets(const LayerCosts& costs, double first_bucket_mb,
                                       double bucket_mb) {
  std::vector<baselines::TensorSlot> tensors;
  std::vector<int> layer_of_tensor;
  for (int layer : costs.order) {  // registration order = forward order
    if (costs.parameter_bytes[layer] <= 0) continue;
    tensors.push_back({static_cast<size_t>(costs.parameter_bytes[layer]), "float"});
    layer_of_tensor.push_back(layer);
  }
  std::vector<LayerBucket> buckets;
  if (tensors.empty()) return buckets;
  for (const baselines::Bucket& bucket :
       baselines::assign_buckets(tensors, baselines::BucketOrder::kReverse,
                                 baselines::ddp_size_limits(first_bucket_mb, bucket_mb))) {
    LayerBucket out;
    for (size_t t : bucket.tensors) out.layers.push_back(layer_of_tensor[t]);
    out.bytes = static_cast<double>(bucket.bytes);
    buckets.push_back(std::move(out));
  }
  return buckets;
}

std::vector<int> bucket_cuts(const LayerCosts& costs, const std::vector<LayerBucket>& buckets) {
  const int layers = costs.size();
  // Position of every layer in the forward order; backward walks it from the end.
  std::vector<int> position(static_cast<size_t>(layers));
  for (int p = 0; p < layers; ++p) position[costs.order[p]] = p;
  std::vector<int> cuts;
  for (const LayerBucket& bucket : buckets) {
    int first = layers;
    for (int layer : bucket.layers) first = std::min(first, position[layer]);
    cuts.push_back(first);
  }
  return cuts;
}

int add_bucket_copy(TaskGraph& graph, const Cluster& cluster,
                    const std::vector<LayerBucket>& buckets, int r, size_t k, int passes,
                    int micro) {
  return graph.add_compute(r, TaskCategory::kBucketCopy,
                           passes * cluster.bucket_copy_seconds(buckets[k].bytes), micro,
                           static_cast<int>(k));
}

int add_bucket_collectives(TaskGraph& graph, const Cluster& cluster,
                           const std::vector<LayerBucket>& buckets, int group, bool overlap,
                           const std::vector<std::vector<int>>& bucket_ready,
                           const std::vector<int>& last_backward) {
  const std::vector<int>& ranks = graph.groups()[group];
  const int n = static_cast<int>(ranks.size());
  const bool copies = cluster.models_bucket_copies();
  auto add_copy = [&](int i, size_t k, int passes) {  // on the group's i-th rank
    return add_bucket_copy(graph, cluster, buckets, ranks[i], k, passes);
  };
  int last_collective = -1;
  std::vector<int> collectives;
  for (size_t k = 0; k < buckets.size(); ++k) {
    // Sync mode, as the reducer runs it after backward: per bucket copy in, all-reduce, copy
    // out, one bucket after the other (the compute stream keeps them in that order).
    std::vector<int> copied_in(n);
    for (int r = 0; r < n; ++r) {
      copied_in[r] = overlap ? bucket_ready[k][r] : last_backward[r];
      if (copies && !overlap) {
        copied_in[r] = add_copy(r, k, 2);
      }
    }
    last_collective = graph.add_collective(group, buckets[k].bytes, static_cast<int>(k));
    collectives.push_back(last_collective);
    for (int r = 0; r < n; ++r) graph.depend(last_collective, copied_in[r]);
    if (copies && !overlap) {
      for (int r = 0; r < n; ++r) {
        const int out = add_copy(r, k, 1);
        graph.depend(out, last_collective);
      }
    }
  }
  if (copies && overlap) {  // after backward: wait for each bucket, copy it out
    for (size_t k = 0; k < buckets.size(); ++k) {
      for (int r = 0; r < n; ++r) {
        const int out = add_copy(r, k, 1);
        graph.depend(out, collectives[k]);
      }
    }
  }
  return last_collective;
}

SimulatedIteration simulate_data_parallel(const Cluster& cluster, const LayerCosts& costs,
                                          const DataParallelSystem& system, ComputeNoise& noise) {
  if (system.world < 1 || system.world > cluster.num_gpus()) {
    throw std::invalid_argument("world size outside the cluster");
  }
  if (system.accumulation < 1) throw std::invalid_argument("accumulation must be >= 1");
  const int n = system.world;
  const int layers = costs.size();
  const std::vector<LayerBucket> buckets =
      layer_buckets(costs, system.first_bucket_mb, system.bucket_mb);
  const std::vector<int> cuts = bucket_cuts(costs, buckets);
  const double samples = system.batch_per_rank / system.accumulation;
  const double scale = samples / costs.profile_batch;
  auto backward_of = [&](int from, int to) {  // positions to..from, inclusive
    double seconds = 0;
    for (int p = to; p <= from; ++p) seconds += costs.backward_s[costs.order[p]];
    return seconds * scale;
  };
  const double forward_s = costs.total_forward_s() * scale;

  SimulatedIteration result;
  result.graph = TaskGraph(n);
  TaskGraph& graph = result.graph;
  std::vector<int> ranks(static_cast<size_t>(n));
  std::iota(ranks.begin(), ranks.end(), 0);
  const int group = graph.add_group(ranks);
  // The reducer's host-side passes (cluster.bucket_copy_seconds): before a bucket's all-reduce
  // its gradients are copied in and scaled by 1/n (2 passes), after it copied back out (1).
  const bool copies = cluster.models_bucket_copies();
  // Appends `passes` of them over bucket k to rank r's compute stream.
  auto add_copy = [&](int r, size_t k, int passes, int micro = -1) {
    return add_bucket_copy(graph, cluster, buckets, r, k, passes, micro);
  };
  // bucket_ready[k][rank]: the compute task after which bucket k can be all-reduced.
  std::vector<std::vector<int>> bucket_ready(buckets.size(), std::vector<int>(n));
  std::vector<int> last_backward(n);
  for (int r = 0; r < n; ++r) {
    for (int mb = 0; mb < system.accumulation; ++mb) {
      const int micro = system.accumulation > 1 ? mb : -1;
      graph.add_compute(r, TaskCategory::kForward, noise.apply(forward_s), micro);
      if (mb + 1 < system.accumulation) {
        graph.add_compute(r, TaskCategory::kBackward, noise.apply(backward_of(layers - 1, 0)),
                          micro);
        continue;
      }
      // Last micro-batch: backward cut where buckets become ready (cuts descend). In overlap
      // mode a bucket's copy-in runs in the backward hooks, right after its segment.
      int from = layers - 1;
      int segment = -1;
      for (size_t k = 0; k < buckets.size(); ++k) {
        if (cuts[k] <= from) {
          segment = graph.add_compute(r, TaskCategory::kBackward,
                                      noise.apply(backward_of(from, cuts[k])), micro);
          from = cuts[k] - 1;
        }
        bucket_ready[k][r] = segment;
        if (copies && system.overlap) {
          segment = add_copy(r, k, 2, micro);
          bucket_ready[k][r] = segment;
        }
      }
      if (from >= 0 || segment < 0) {
        segment =
            graph.add_compute(r, TaskCategory::kBackward, noise.apply(backward_of(from, 0)), micro);
      }
      last_backward[r] = segment;
    }
  }
  const int last_collective = add_bucket_collectives(graph, cluster, buckets, group, system.overlap,
                                                     bucket_ready, last_backward);
  std::vector<int> steps(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    steps[r] = graph.add_compute(r, TaskCategory::kStep, noise.apply(system.step_s));
    if (last_collective >= 0) graph.depend(steps[r], last_collective);
  }
  for (size_t g = 0; g < system.gathers_after_step.size(); ++g) {
    const int gather = graph.add_collective(group, system.gathers_after_step[g],
                                            static_cast<int>(g), TaskCategory::kAllGather);
    for (int step : steps) graph.depend(gather, step);
  }
  result.times = run_tasks(cluster, graph);
  result.ranks = rank_phases(graph, result.times);
  return result;
}

}  // namespace harness::simulator
