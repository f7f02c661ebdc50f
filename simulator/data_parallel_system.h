// Data parallelism on every rank of the cluster: DDP (gradient buckets all-reduced while the
// backward pass goes on, or after it) and pure data parallelism with gradient accumulation
// (micro-batches without communication, buckets all-reduced during the last one's backward).
#pragma once

#include <vector>

#include "simulator/cluster.h"
#include "simulator/layer_costs.h"
#include "simulator/system_result.h"

namespace harness::simulator {

struct DataParallelSystem {
  int world = 1;
  double batch_per_rank = 1;  // samples per rank per iteration
  int accumulation = 1;       // micro-batches per iteration
  double bucket_mb = 25, first_bucket_mb = 1;
  bool overlap = true;  // true: DDP's overlap mode; false: all buckets after backward (sync)
  double step_s = 0;    // optimizer step per iteration
  // ZeRO-1 (simulator/sharded_system.h): all-gathers after the step, their whole buffers'
  // bytes, each depending on every rank's step.
  std::vector<double> gathers_after_step;
};

// Gradient buckets as the DDP reducer forms them (baselines/ddp/bucket_assignment.h), with one
// tensor per layer (the profile gives parameter bytes per layer): layer indices per bucket, in
// the order the buckets become ready during backward, and their bytes.
struct LayerBucket {
  std::vector<int> layers;
  double bytes = 0;
};
std::vector<LayerBucket> layer_buckets(const LayerCosts& costs, double first_bucket_mb,
                                       double bucket_mb);

SimulatedIteration simulate_data_parallel(const Cluster& cluster, const LayerCosts& costs,
                                          const DataParallelSystem& system, ComputeNoise& noise);

}  // namespace harness::simulator
