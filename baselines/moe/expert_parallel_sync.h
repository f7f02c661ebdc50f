// Expert parallelism's gradient synchronisation (DeepSpeed-MoE, FastMoE): the dense part --
// attention, embeddings, routers, everything every rank holds -- is averaged over the ranks by
// the bucketed reducer, as DDP does; each expert lives on one rank only, and its gradient
// already sums every rank's loss (the all-to-all's backward brought each rank's part home), so
// it is divided by the world size: both then are gradients of the ranks' mean loss, which is
// the loss of one process on the global batch.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "baselines/ddp/gradient_reducer.h"
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

  void finish_backward() override;
  GradientReducer& dense_reducer() { return *dense_; }

 private:
  std::vector<at::Tensor> experts_;
  std::unique_ptr<GradientReducer> dense_;
  int world_size_;
};

}  // namespace baselines
