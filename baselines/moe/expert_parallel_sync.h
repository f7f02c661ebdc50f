// Expert parallelism's gradient synchronisation (DeepSpeed-MoE, FastMoE): the dense part --
// attention, embeddings, routers, everything every rank holds -- is averaged over the ranks by
// the bucketed reducer, as DDP does; each expert lives on one rank only, and its gradient
// already sums every rank's loss (the all-to-all's backward brought each rank's part home), so
// it is divided by the world size: both then are gradients of the ranks' mean loss, which is
// the loss of one process on the global batch. The dense part may instead be sharded at ZeRO
// stage 1 or 2 over the ranks (DeepSpeed-MoE runs ZeRO beside its experts).
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "baselines/ddp/gradient_reducer.h"
#include "baselines/sharded/replica_shards.h"
#include "runtime/comm/communicator.h"
#include "runtime/comm/gradient_sync.h"

namespace baselines {

class ExpertParallelSync : public runtime::GradientSync {
 public:
  // `parameters`/`names`: the model's, in registration order; `experts`: those of them held
  // by this rank alone (runtime/models/moe.h expert_parameters). The reducer gets the rest.
  ExpertParallelSync(const std::vector<at::Tensor>& parameters,
                     const std::vector<std::string>& names, std::vector<at::Tensor> experts,
                     runtime::Communicator& communicator, ReducerOptions options);
  // The dense part sharded at ZeRO stage 1 or 2 over the ranks (baselines/sharded/
  // replica_shards.h, averaging), the experts stepped whole beside its chunk by its optimizer.
  ExpertParallelSync(const std::vector<at::Tensor>& parameters,
                     const std::vector<std::string>& names, std::vector<at::Tensor> experts,
                     runtime::Communicator& communicator, ReplicaShardOptions dense_shards);

  void finish_backward() override;
  // The dense part's bucketed reducer (none where it is sharded at stage 2).
  GradientReducer* dense_reducer();
  // The dense part's shards, where it is sharded.
  ReplicaShards* dense_shards() { return shards_.get(); }

 private:
  std::vector<at::Tensor> experts_;
  std::unique_ptr<GradientReducer> dense_;
  std::unique_ptr<ReplicaShards> shards_;
  int world_size_;
};

}  // namespace baselines
