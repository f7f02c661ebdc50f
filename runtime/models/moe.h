// Mixture-of-experts feed-forward (issue 22): GShard-style top-2 and Switch-style top-1
// routing with a per-expert capacity, token dropping beyond it and the load-balancing
// auxiliary loss, as the layer HiDup's SGMoE/Switch workloads put in every other encoder layer.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/linear.h>
#include <torch/types.h>

namespace runtime {

struct MoeOptions {
  int64_t experts = 4;
  int64_t top_k = 2;  // 1: Switch (the router's probability), 2: GShard (the pair renormalised)
  double capacity_factor = 1.25;  // tokens an expert takes: ceil(factor x tokens x k / experts)
};

// Tokens [..., hidden] -> [..., hidden]. Each token goes to its top_k experts (a 4x GELU
// feed-forward each), weighted by its gate; first choices claim capacity before second ones,
// in token order, and a choice beyond its expert's capacity is dropped (it adds nothing: the
// encoder layer's residual carries the token on).
class MoeFeedForwardImpl : public torch::nn::Module {
 public:
  MoeFeedForwardImpl(int64_t hidden, MoeOptions options);
  torch::Tensor forward(torch::Tensor x);

  // Of the last forward: the Switch load-balancing loss, experts x sum_e f_e P_e (f_e: the
  // share of tokens whose first choice is e, before capacity; P_e: the mean router probability
  // of e), 1 when balanced; and the choices dropped for capacity.
  torch::Tensor auxiliary_loss() const { return auxiliary_loss_; }
  int64_t dropped_choices() const { return dropped_; }
  int64_t capacity(int64_t tokens) const;

  torch::nn::Linear router{nullptr};
  torch::nn::ModuleList experts{nullptr};  // each: Sequential(Linear(h, 4h), GELU, Linear(4h, h))

 private:
  MoeOptions options_;
  torch::Tensor auxiliary_loss_;
  int64_t dropped_ = 0;
};
TORCH_MODULE(MoeFeedForward);

}  // namespace runtime
