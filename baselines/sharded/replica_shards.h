// ZeRO stages 1, 2 and 3 over the replicas of a set of parameters: a pipeline stage's (the
// composition DeepSpeed's pipeline engine runs, its replicas ZeRO-1; torchtitan's FSDP inside
// pipeline stages) or expert parallelism's dense part (DeepSpeed-MoE's ZeRO beside its experts).
// The parameters are laid end to end in one padded flat buffer (one unit,
// baselines/sharded/shard_layout.h) and replica r owns chunk r of it:
//   stage 1 - after the iteration's last backward the gradients are summed (or averaged) over
//             the replicas by DDP's buckets, as plain replicas do; each replica steps its chunk;
//   stage 2 - the gradients are reduce-scattered instead, and the whole ones freed, so a
//             replica holds its chunk's gradient between iterations;
// then the updated chunks are all-gathered into every replica's parameters.
//   stage 3 - as stage 2, but the step frees the whole parameters instead (the replica keeps a
//             copy of its chunk), and gather_parameters all-gathers them before the next
//             iteration's first forward. They stay whole for all its micro-batches: FSDP2's
//             reshard_after_forward=False, which torchtitan sets under pipelines so that each
//             micro-batch does not gather again. The bytes are stage 2's; what moves is when
//             the whole parameters are held.
// Micro-batches accumulate whole gradients during the iteration (the pipeline's backward passes
// reach every layer of the stage several times), so stages 2 and 3 save memory between
// iterations, not at the peak. Shard steps are element-wise: the parameters equal plain
// replicas' up to the rounding of the sums (tests/runtime/pipeline/pipeline_composition_test.cpp).
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/optim/optimizer.h>

#include <memory>
#include <string>
#include <vector>

#include "baselines/ddp/gradient_reducer.h"
#include "baselines/sharded/shard_layout.h"
#include "runtime/comm/gradient_sync.h"
#include "runtime/protocol/worker_config.h"

namespace baselines {

struct ReplicaShardOptions {
  ZeroStage stage = ZeroStage::kOptimizerState;
  // Stage 1's bucketed all-reduce; `average` also divides stage 2's reduce-scatter (data
  // parallelism averages, a pipeline's replicas sum).
  ReducerOptions reducer;
  runtime::WorkerOptimizer optimizer;
  // Parameters this rank alone holds (expert parallelism's experts): stepped whole by the same
  // optimizer, beside the chunk.
  std::vector<at::Tensor> local_parameters;
};

class ReplicaShards : public runtime::GradientSync {
 public:
  // `parameters`: the stage's, in registration order; they become views of the flat buffer.
  ReplicaShards(std::vector<at::Tensor> parameters, std::vector<std::string> names,
                runtime::Communicator& replicas, const ReplicaShardOptions& options);
  ~ReplicaShards() override;

  // The pipeline calls this after the iteration's last backward: the chunk's gradient summed
  // over the replicas is in place.
  void finish_backward() override;
  // Stage 2's sum is a reduce-scatter.
  runtime::TraceCategory collective() const override;
  // Steps the chunk, then all-gathers every replica's chunk into the parameters (recorded in
  // `trace` while it is enabled); stage 3 frees the parameters instead.
  void step(runtime::TraceRecorder& trace);
  // Before the iteration's first forward: the gradients cleared and, at stage 3, the parameters
  // the last step freed all-gathered from every replica's chunk.
  void begin_iteration(runtime::TraceRecorder& trace);
  // Stage 3: the parameters the last step freed, all-gathered from every replica's chunk. A
  // no-op while they are whole (every other stage).
  void gather_parameters(runtime::TraceRecorder& trace);

  // Stage 1's bucketed all-reduce (its buckets, its trace); none at stage 2.
  GradientReducer* reducer();
  const ShardLayout& layout() const;
  torch::optim::Optimizer& optimizer();
  // What the replica holds for its memory report: the padded flat buffer its parameters are
  // views of (at stage 3 while gathered, beside its chunk); the whole parameters' gradients at
  // stage 1, the chunk's at stages 2 and 3.
  std::vector<at::Tensor> held_parameters() const;
  std::vector<at::Tensor> held_gradients() const;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

// The replica synchronisation a pipeline stage builds once it knows its parameters; `made` is
// pointed at the ReplicaShards it builds (the pipeline owns it; the rank steps through it).
runtime::GradientSyncFactory replica_shards_factory(ReplicaShardOptions options,
                                                    ReplicaShards*& made);

}  // namespace baselines
