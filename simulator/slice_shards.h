// The data axis of a tensor-parallel system sharded by a ZeRO stage (torchtitan's 2D: FSDP x
// TP): slice j of every tensor group holds 1/replicas of its slice's states, its collectives on
// the group of slice j's ranks, queued on their collective channels in the runtime's order, as
// simulator/sharded_system.h queues a plain sharded system's. Stage 3 gathers each unit (a layer
// with parameters, prefetched) before its forward and again before its backward and
// reduce-scatters its gradients after it; stage 2 reduce-scatters them and gathers the updated
// shards after the step; stage 1 keeps DDP's buckets (the tensor system's) and gathers after the
// step.
#pragma once

#include <utility>
#include <vector>

#include "simulator/layer_costs.h"
#include "simulator/task_graph.h"

namespace harness::simulator {

class SliceShards {
 public:
  // `group`: slice j's ranks over the replicas, in replica order.
  SliceShards(const LayerCosts& costs, TaskGraph& graph, int group, int replicas, int zero_stage);

  // Stage 3: every unit's gather, queued before anything else on the channel (prefetch). The
  // gather a layer's forward at `position` waits for; -1 where none.
  void add_forward_gathers();
  int forward_gather(int position) const;
  // A replica's forward `task` of the layer at `position`: the runtime queues unit u's gather
  // as forward enters unit u - 1 (one unit ahead), so the gather waits for the layer before it.
  void forward_computed(int position, int task);

  // Once every replica's compute is in the graph: `backward[d][position]` is replica d's slice
  // compute of that layer's backward, `forward_end[d]` its last forward. Stage 3: each unit
  // gathered again where backward reaches it (the unit before queued behind it), its backward
  // made to wait for that; stages 2 and 3: each unit's gradients reduce-scattered once every
  // replica's backward of it is done. Returns the last reduce-scatter (-1: none).
  int add_backward(const std::vector<std::vector<int>>& backward,
                   const std::vector<int>& forward_end);

  // Stages 1 and 2: every unit's updated shard gathered after the slices' `steps`.
  void add_gathers_after(const std::vector<int>& steps);

 private:
  int units() const { return static_cast<int>(spans_.size()); }
  int gather(int unit, const std::vector<int>& after);
  // Replica d's task where backward reaches unit k: the next unit's backward, or its forward's
  // end for the last.
  int reached(int k, int d, const std::vector<std::vector<int>>& backward,
              const std::vector<int>& forward_end) const;

  const LayerCosts& costs_;
  TaskGraph& graph_;
  int group_, replicas_, zero_stage_;
  std::vector<std::pair<int, int>> spans_;  // each unit's positions
  std::vector<double> unit_bytes_;          // padded over the replicas, float32
  std::vector<int> forward_gathers_;        // by unit
};

}  // namespace harness::simulator
