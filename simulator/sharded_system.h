// Sharded data parallelism on every rank of the cluster (baselines/sharded/): ZeRO stage 1 (DDP's
// bucketed all-reduce, then a shard step and every unit's all-gather), stage 2 (each unit's
// gradients reduce-scattered as backward finishes it) and stage 3 (each unit all-gathered
// before its forward and again before its backward). A unit is a layer with parameters, as the
// runtime's `unit: layer`; layers without parameters join the unit before them. The collectives
// are queued in the runtime's order on each rank's collective channel, so a prefetched
// all-gather waits behind the reduce-scatters queued before it, as on the real ranks.
#pragma once

#include <utility>
#include <vector>

#include "baselines/sharded/shard_layout.h"
#include "runtime/parallel/parallel_system.h"
#include "simulator/cluster.h"
#include "simulator/layer_costs.h"
#include "simulator/system_result.h"

namespace harness::simulator {

struct ShardedSystem {
  int world = 1;
  double batch_per_rank = 1;
  baselines::ZeroStage stage = baselines::ZeroStage::kParameters;
  bool prefetch = true;
  runtime::ShardUnitKind unit = runtime::ShardUnitKind::kLayer;  // a layer each, or one
  double bucket_mb = 25, first_bucket_mb = 1;                    // stage 1's all-reduce buckets
  double step_s = 0;  // the whole model's optimizer step; a rank steps 1/world of it
};

// The units' layout over the ranks, from the profile's parameter bytes (fp32 elements): a unit
// per layer with parameters, or the whole model as one.
baselines::ShardLayout shard_layout_of(const LayerCosts& costs, int world,
                                       runtime::ShardUnitKind unit);

// The positions (in costs.order) each unit's forward runs: from its layer to the next unit's;
// layers before the first unit join the first. One unit of the whole model spans them all.
std::vector<std::pair<int, int>> unit_spans(const LayerCosts& costs, runtime::ShardUnitKind unit);

SimulatedIteration simulate_sharded(const Cluster& cluster, const LayerCosts& costs,
                                    const ShardedSystem& system, ComputeNoise& noise);

}  // namespace harness::simulator
