// Expert parallelism (runtime/models/moe.h, baselines/moe/) on every rank of the cluster: each
// rank holds experts/world of every mixture's experts and the whole dense part, runs its own
// samples, and sends each token to its expert and back by all-to-all. A rank's experts take
// what every rank dispatches to them, as many token rows as one process with every expert
// computes at the rank's batch, so a layer's compute is the profile's. Each mixture's forward
// waits in three all-to-alls on the rank's thread (the rows per expert, the dispatch, the
// combine) and its backward in two (the combine's gradient, the dispatch's), sized from the
// profile's dispatch bytes (runtime::LayerMixtures). The dense part's gradients are summed by
// DDP's buckets, or sharded by a ZeRO stage as one flat unit (baselines/sharded/
// replica_shards.h): stage 1 keeps the buckets and gathers the updated chunks after the step,
// stages 2 and 3 reduce-scatter the flat gradient after backward and gather after the step
// (stage 3 before the next iteration's first forward: the same place on a steady timeline).
#pragma once

#include "simulator/cluster.h"
#include "simulator/layer_costs.h"
#include "simulator/system_result.h"

namespace harness::simulator {

struct ExpertSystem {
  int world = 1;
  double batch_per_rank = 1;
  int zero_stage = 0;  // the dense part's: 0 DDP's buckets; 1, 2, 3 sharded over the ranks
  double bucket_mb = 25, first_bucket_mb = 1;
  bool overlap = true;  // the buckets: DDP's overlap mode, or all after backward
  double step_s = 0;    // the whole model's optimizer step, every expert in it
};

// The costs with each layer's experts taken out of its parameter bytes: what every rank holds
// alike, and what DDP's buckets or the shards hold.
LayerCosts dense_part(const LayerCosts& costs);

// The token exchanges of one mixture layer (`layer`, a count of mixtures) at `samples` per rank:
// the rows-per-expert counts (8 bytes an expert) and the dispatch's bytes.
struct MixtureExchange {
  int mixtures = 0;
  double count_bytes = 0, dispatch_bytes = 0;
};
MixtureExchange mixture_exchange(const LayerCosts& costs, int layer, double samples);

// Throws std::invalid_argument where the profile has no mixture or the world is outside the
// cluster.
SimulatedIteration simulate_expert_parallel(const Cluster& cluster, const LayerCosts& costs,
                                            const ExpertSystem& system, ComputeNoise& noise);

}  // namespace harness::simulator
