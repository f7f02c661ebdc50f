// Tensor parallelism (Megatron-LM's; runtime/parallel/tensor_region.h) on the cluster: groups
// of `tensor` consecutive ranks split each transformer block, the data axis runs across them,
// slice j of every group summing its gradients with DDP's buckets, or sharding its states by a
// ZeRO stage (FSDP x TP at stage 3). The costs are one slice's:
// a profile measured with `harness profile layers --tensor t` (its blocks at 1/t of the heads
// and feed-forward columns, the other layers whole, the slice's parameter bytes). Each split
// block's forward ends in Megatron's two collectives on its tensor group -- all-reduces of the
// block's output, or, with sequence parallelism, an all-gather and a reduce-scatter of it each
// -- and so does its backward (a fully recomputed block's backward first repeats its forward's);
// the rank's thread waits in them
// (TaskGraph::add_blocking_collective). Sequence parallelism also gathers the tokens once where
// the split layers end (forward) and begin (backward), and all-reduces the norms' partial
// gradients in each block's backward; its norms on 1/t of the tokens are priced as the
// profile's whole ones. With the vocabulary split (the profile's embedding and head are then the
// slice's too) the embedding's forward ends in Megatron's g (an all-reduce, or a reduce-scatter
// whose backward is an all-gather), the head is entered through f (an all-gather under sequence
// parallelism; its backward an all-reduce or a reduce-scatter) and followed by the loss's
// all-gather and two all-reduces of one float32 a token; these replace sequence parallelism's
// two gathers of the tokens, and the last norm's gradient is partial too. Gathering again in
// backward (`recompute_gather`) adds two all-gathers to each split block's backward.
#pragma once

#include <vector>

#include "simulator/cluster.h"
#include "simulator/layer_costs.h"
#include "simulator/system_result.h"
#include "simulator/tensor_collectives.h"

namespace harness::simulator {

struct TensorSystem {
  int world = 1;
  int tensor = 2;
  bool sequence_parallel = false;
  double batch_per_group = 1;  // samples a group's slices run per iteration (batch x tensor)
  double bucket_mb = 25, first_bucket_mb = 1;
  bool overlap = true;  // the replicas' buckets: DDP's overlap mode, or all after backward
  double step_s = 0;    // a slice's optimizer step
  // Sequence parallelism: the block's parameters whose gradients are partial over the token
  // shards (runtime::partial_vectors_of), each all-reduced on its own as backward makes it,
  // and the bytes of one (the width in fp32).
  int partial_vectors = 0;
  double partial_bytes = 0;
  // The embedding and the head split by vocabulary rows; `token_bytes`, 4 bytes a token of the
  // group's batch, sizes the loss's collectives.
  bool vocabulary_parallel = false;
  double token_bytes = 0;
  // Sequence parallelism gathering each split block's two inputs again in its backward.
  bool recompute_gather = false;
  // Full activation checkpointing of the first of each `recompute_every` split blocks (0: none):
  // its backward runs its forward again, and with it the forward's collectives. The compute is
  // the profile's (`harness profile layers --activation-checkpointing full` times the backward
  // with the recomputation in it); the collectives are priced here.
  int recompute_every = 0;
  // The replicas' ZeRO stage (0: DDP's buckets; 1, 2, 3: slice j's states sharded over its
  // replicas, 3 being torchtitan's FSDP x TP; simulator/slice_shards.h).
  int zero_stage = 0;
};

SimulatedIteration simulate_tensor_parallel(const Cluster& cluster, const LayerCosts& costs,
                                            const TensorSystem& system, ComputeNoise& noise);

}  // namespace harness::simulator
