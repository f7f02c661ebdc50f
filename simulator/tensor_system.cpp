#include "simulator/tensor_system.h"

#include <stdexcept>
#include <string>

#include "simulator/data_parallel_system.h"
#include "simulator/slice_shards.h"
#include "simulator/tensor_collectives.h"

namespace harness::simulator {

namespace {

// One iteration's graph, replica by replica: each layer's compute on the group's slices, then
// the collectives its group's threads wait in, in the order every slice issues them.
class TensorGraphBuilder {
 public:
  TensorGraphBuilder(const Cluster& cluster, const LayerCosts& costs, const TensorSystem& system,
                     ComputeNoise& noise, TaskGraph& graph)
      : cluster_(cluster),
        costs_(costs),
        system_(system),
        noise_(noise),
        graph_(graph),
        blocks_(costs),
        replicas_(system.world / system.tensor),
        scale_(system.batch_per_group / costs.profile_batch) {
    if (blocks_.first < 0) {
      throw std::invalid_argument(
          "the profile has no transformer block for a tensor axis to split");
    }
    if (system.vocabulary_parallel) find_vocabulary_layers();
    if (replicas_ > 1 && system.zero_stage < 2) {
      buckets_ = layer_buckets(costs, system.first_bucket_mb, system.bucket_mb);
      cuts_ = bucket_cuts(costs, buckets_);
    }
    const size_t slices = static_cast<size_t>(system.tensor);
    ready_.assign(slices,
                  std::vector<std::vector<int>>(buckets_.size(), std::vector<int>(replicas_, -1)));
    last_backward_.assign(slices, std::vector<int>(replicas_, -1));
    const std::vector<int> per_replica(static_cast<size_t>(costs.size()), -1);
    backward_.assign(slices, std::vector<std::vector<int>>(replicas_, per_replica));
    forward_end_.assign(slices, std::vector<int>(replicas_, -1));
    add_slice_groups();
  }

  void add_replica(int d) {
    std::vector<int> ranks;
    for (int j = 0; j < system_.tensor; ++j) ranks.push_back(d * system_.tensor + j);
    const int group = graph_.add_group(ranks);
    for (int p = 0; p < costs_.size(); ++p) add_forward(ranks, group, d, p);
    for (int p = costs_.size() - 1; p >= 0; --p) add_backward(ranks, group, d, p);
  }

  // Slice j's buckets all-reduced over its replicas (none with one), or its shards'
  // reduce-scatters, then every step (of a shard, where sharded) and the gathers after it.
  void add_replicas_sum_and_steps() {
    const bool sharded = replicas_ > 1 && system_.zero_stage > 0;
    const double step_s = system_.step_s / (sharded ? replicas_ : 1);
    for (int j = 0; j < system_.tensor; ++j) {
      int last = -1;
      if (sharded && system_.zero_stage >= 2) {
        last = shards_[j].add_backward(backward_[j], forward_end_[j]);
      } else if (replicas_ > 1) {
        last = add_bucket_collectives(graph_, cluster_, buckets_, slice_groups_[j], system_.overlap,
                                      ready_[j], last_backward_[j]);
      }
      std::vector<int> steps;
      for (int d = 0; d < replicas_; ++d) {
        steps.push_back(
            graph_.add_compute(d * system_.tensor + j, TaskCategory::kStep, noise_.apply(step_s)));
        if (last >= 0) graph_.depend(steps.back(), last);
      }
      if (sharded) shards_[j].add_gathers_after(steps);
    }
  }

 private:
  // Slice j's ranks over the replicas, and where the replicas shard their states, what queues
  // their collectives (stage 3's forward gathers first, as the runtime prefetches them).
  void add_slice_groups() {
    if (replicas_ < 2) return;
    for (int j = 0; j < system_.tensor; ++j) {
      std::vector<int> ranks;
      for (int d = 0; d < replicas_; ++d) ranks.push_back(d * system_.tensor + j);
      slice_groups_.push_back(graph_.add_group(ranks));
      if (system_.zero_stage == 0) continue;
      shards_.emplace_back(costs_, graph_, slice_groups_.back(), replicas_, system_.zero_stage);
      shards_.back().add_forward_gathers();
    }
  }

  void add_block_collectives(int group, double bytes) {
    add_megatron_pair(graph_, group, bytes, system_.sequence_parallel);
  }

  double bytes_of(int layer) const { return costs_.activation_bytes[layer] * scale_; }

  // The embedding: the first layer, an Embedding; the head: the last, a Linear (llama's chain).
  void find_vocabulary_layers() {
    const int last = costs_.size() - 1;
    if (costs_.names[costs_.order[0]].rfind("Embedding", 0) != 0 ||
        costs_.names[costs_.order[last]].rfind("Linear", 0) != 0 || last < 2) {
      throw std::invalid_argument(
          "the profile's first layer is not an embedding or its last not a linear head, which a "
          "vocabulary split needs");
    }
    head_ = last;
  }
  bool vocabulary() const { return system_.vocabulary_parallel; }
  // The head's input: the last norm's output.
  double head_input_bytes() const { return bytes_of(costs_.order[head_ - 1]); }

  // Megatron's g after a partial result (the vocabulary's lookup) or f's backward (the head's
  // input gradient): an all-reduce, or under sequence parallelism a reduce-scatter.
  int add_partial_sum(int group, double bytes) {
    return system_.sequence_parallel
               ? graph_.add_blocking_collective(group, bytes, TaskCategory::kReduceScatter)
               : graph_.add_blocking_collective(group, bytes);
  }
  // The vocabulary-parallel loss: each token's largest logit all-gathered, then two all-reduces
  // of one number a token.
  void add_loss_collectives(int group) {
    graph_.add_blocking_collective(group, system_.token_bytes * system_.tensor,
                                   TaskCategory::kAllGather);
    graph_.add_blocking_collective(group, system_.token_bytes);
    graph_.add_blocking_collective(group, system_.token_bytes);
  }

  void add_forward(const std::vector<int>& ranks, int group, int d, int p) {
    const int layer = costs_.order[p];
    const bool head = vocabulary() && p == head_;
    if (head && system_.sequence_parallel) {  // f: the tokens gathered into the head
      graph_.add_blocking_collective(group, head_input_bytes(), TaskCategory::kAllGather);
    }
    for (int j = 0; j < system_.tensor; ++j) {
      const int made = graph_.add_compute(ranks[j], TaskCategory::kForward,
                                          noise_.apply(costs_.forward_s[layer] * scale_));
      if (!shards_.empty() && shards_[j].forward_gather(p) >= 0) {
        graph_.depend(made, shards_[j].forward_gather(p));
      }
      if (!shards_.empty()) shards_[j].forward_computed(p, made);
      forward_end_[j][d] = made;
    }
    if (vocabulary() && p == 0) add_partial_sum(group, bytes_of(layer));
    if (head) add_loss_collectives(group);
    if (blocks_.split[layer]) add_split_forward_collectives(group, layer);
  }

  // What a split block's forward waits in: Megatron's pair, and under sequence parallelism the
  // last block's gather of the tokens.
  void add_split_forward_collectives(int group, int layer) {
    add_block_collectives(group, bytes_of(layer));
    if (system_.sequence_parallel && layer == blocks_.last && !vocabulary()) {  // tokens rejoined
      graph_.add_blocking_collective(group, bytes_of(layer), TaskCategory::kAllGather);
    }
  }

  // Before a layer's backward: g's backward under sequence parallelism, the embedding's output
  // gradient gathered from the token shards.
  void add_backward_entry(int group, int p) {
    if (vocabulary() && p == 0 && system_.sequence_parallel) {
      graph_.add_blocking_collective(group, bytes_of(costs_.order[0]), TaskCategory::kAllGather);
    }
  }

  // After a layer's backward, outside the split blocks: f's backward after the head, and under
  // sequence parallelism the last norm's partial gradient (the layer before the head).
  void add_vocabulary_backward(int group, int p) {
    if (!vocabulary()) return;
    if (p == head_) add_partial_sum(group, head_input_bytes());
    if (p == head_ - 1 && system_.sequence_parallel) {
      graph_.add_blocking_collective(group, system_.partial_bytes);
    }
  }

  // Whether a split block runs its forward again in its backward: the first of each
  // `recompute_every` blocks, counted in forward order as the model counts them.
  bool recomputed(int layer) const {
    return system_.recompute_every > 0 && blocks_.index[layer] % system_.recompute_every == 0;
  }

  void add_backward(const std::vector<int>& ranks, int group, int d, int p) {
    const int layer = costs_.order[p];
    add_backward_entry(group, p);
    if (blocks_.split[layer] && recomputed(layer)) add_split_forward_collectives(group, layer);
    for (int j = 0; j < system_.tensor; ++j) {
      int made = graph_.add_compute(ranks[j], TaskCategory::kBackward,
                                    noise_.apply(costs_.backward_s[layer] * scale_));
      backward_[j][d][p] = made;
      for (size_t k = 0; k < buckets_.size(); ++k) {
        if (cuts_[k] != p) continue;
        // Overlap mode copies a bucket in from the backward hook, right after its layer.
        if (system_.overlap && cluster_.models_bucket_copies()) {
          made = add_bucket_copy(graph_, cluster_, buckets_, ranks[j], k, 2);
        }
        ready_[j][k][d] = made;
      }
      last_backward_[j][d] = made;
    }
    add_vocabulary_backward(group, p);
    if (!blocks_.split[layer]) return;
    add_block_collectives(group, bytes_of(layer));
    for (int i = 0; system_.sequence_parallel && system_.recompute_gather && i < 2; ++i) {
      graph_.add_blocking_collective(group, bytes_of(layer), TaskCategory::kAllGather);
    }
    for (int v = 0; system_.sequence_parallel && v < system_.partial_vectors; ++v) {
      graph_.add_blocking_collective(group, system_.partial_bytes);
    }
    // The tokens' gradient gathered where the split layers begin (the embedding's g does it
    // under a vocabulary split).
    if (system_.sequence_parallel && layer == blocks_.first && !vocabulary()) {
      const int gathered =
          graph_.add_blocking_collective(group, bytes_of(layer), TaskCategory::kAllGather);
      for (int j = 0; j < system_.tensor; ++j) last_backward_[j][d] = gathered;
    }
  }

  const Cluster& cluster_;
  const LayerCosts& costs_;
  const TensorSystem& system_;
  ComputeNoise& noise_;
  TaskGraph& graph_;
  SplitBlocks blocks_;
  int replicas_;
  double scale_;
  int head_ = -1;  // the vocabulary split's head (the embedding is 0)
  std::vector<LayerBucket> buckets_;
  std::vector<int> cuts_;
  // By slice j: each bucket's ready task per replica, and each replica's last backward task.
  std::vector<std::vector<std::vector<int>>> ready_;
  std::vector<std::vector<int>> last_backward_;
  // By slice j: its group over the replicas, its shards (ZeRO), and per replica each position's
  // backward compute and the last forward compute.
  std::vector<int> slice_groups_;
  std::vector<SliceShards> shards_;
  std::vector<std::vector<std::vector<int>>> backward_;
  std::vector<std::vector<int>> forward_end_;
};

}  // namespace

SimulatedIteration simulate_tensor_parallel(const Cluster& cluster, const LayerCosts& costs,
                                            const TensorSystem& system, ComputeNoise& noise) {
  if (system.tensor < 1 || system.world % system.tensor != 0) {
    throw std::invalid_argument("a tensor axis of " + std::to_string(system.tensor) +
                                " does not divide " + std::to_string(system.world) + " ranks");
  }
  if (system.world > cluster.num_gpus())
    throw std::invalid_argument("world size outside the cluster");
  SimulatedIteration result;
  result.graph = TaskGraph(system.world);
  TensorGraphBuilder builder(cluster, costs, system, noise, result.graph);
  for (int d = 0; d < system.world / system.tensor; ++d) builder.add_replica(d);
  builder.add_replicas_sum_and_steps();
  result.times = run_tasks(cluster, result.graph);
  result.ranks = rank_phases(result.graph, result.times);
  return result;
}

}  // namespace harness::simulator
