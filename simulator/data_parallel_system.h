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

// Forward position where each bucket becomes ready: backward has passed its earliest layer
// there, so the last micro-batch's backward is cut at these positions (they descend).
std::vector<int> bucket_cuts(const LayerCosts& costs, const std::vector<LayerBucket>& buckets);

// `passes` of the reducer's host-side copy over bucket k on rank r's compute stream
// (Cluster::bucket_copy_seconds).
int add_bucket_copy(TaskGraph& graph, const Cluster& cluster,
                    const std::vector<LayerBucket>& buckets, int r, size_t k, int passes,
                    int micro = -1);

// Each bucket's all-reduce over `group` after its gradients are ready (overlap: from
// bucket_ready[k][i], the task that made them on the group's i-th rank; sync: after
// last_backward[i], copied in and out one bucket after the other), and the copies out.
// Returns the last collective (-1: none).
int add_bucket_collectives(TaskGraph& graph, const Cluster& cluster,
                           const std::vector<LayerBucket>& buckets, int group, bool overlap,
                           const std::vector<std::vector<int>>& bucket_ready,
                           const std::vector<int>& last_backward);

SimulatedIteration simulate_data_parallel(const Cluster& cluster, const LayerCosts& costs,
                                          const DataParallelSystem& system, ComputeNoise& noise);

}  // namespace harness::simulator
