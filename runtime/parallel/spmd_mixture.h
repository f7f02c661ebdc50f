// A mixture of experts of a searched SPMD plan (bert_moe's "encoder.layer.<i>.experts") run under
// its signature by the zoo's own layer (runtime/models/moe.h), holding this rank's part of the
// zoo's weights:
// - data: this rank's batch shard through every expert, all gradients summed;
// - experts: the batch shard routed to experts spread over the ranks by all-to-all (expert
//   parallelism), the router's gradient summed;
// - replicated: every token through every expert on every rank;
// - column: every token routed on every rank, each expert's hidden layer split (its second
//   bias added by rank 0 alone), the output a partial sum, the router's gradient summed.
// Tokens are routed in one capacity group per rank's share of the batch (GShard's groups) under
// every signature, so each trains as one process whose layer routes in `ranks` groups
// (MoeOptions::groups): a batch shard routes its own group, a whole batch all of them.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <string>
#include <vector>

#include "runtime/comm/communicator.h"
#include "runtime/models/moe.h"
#include "runtime/parallel/spmd_plan.h"

namespace runtime {

class SpmdMixture {
 public:
  // `whole`: the zoo's layer, named `module` ("encoder.layer.1.moe") among `zoo`'s tensors;
  // `group`: every rank of the plan, outliving this object.
  SpmdMixture(const SpmdStep& step, const MoeFeedForwardImpl& whole, const std::string& module,
              const std::map<std::string, at::Tensor>& zoo, Communicator& group);

  // The input in the step's input form; the output in its output form.
  at::Tensor forward(const at::Tensor& x);
  // This rank's part of the last forward's load-balancing loss (unweighted): the whole where the
  // rank routed every group itself and its gradients need no sum (replicated); otherwise a part,
  // the ranks' parts summing to the whole.
  at::Tensor auxiliary_loss() const;
  bool auxiliary_is_part() const { return signature_ != harness::spmd::SignatureKind::kReplicated; }

  void set_trace(TraceRecorder* trace, const std::string& name) { layer_->set_trace(trace, name); }

  // This rank's weights, for its optimizer; those whose gradients the ranks sum.
  std::vector<at::Tensor> parameters() const;
  std::vector<at::Tensor> summed_parameters() const;
  // Its experts' weights as this rank holds them (all but the router).
  std::vector<at::Tensor> expert_parameters() const;
  // The layer's weights whole under the zoo's names (every rank calls it).
  void add_whole(std::map<std::string, at::Tensor>& whole);

 private:
  void take_expert(int64_t local, int64_t global, const std::map<std::string, at::Tensor>& zoo);
  at::Tensor whole_of(const at::Tensor& local, int split);

  harness::spmd::SignatureKind signature_;
  std::string module_;
  Communicator& group_;
  MoeFeedForward layer_{nullptr};
};

}  // namespace runtime
