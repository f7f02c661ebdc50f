// Mixture-of-experts feed-forward (issue 22): GShard-style top-2 and Switch-style top-1
// routing with a per-expert capacity, token dropping beyond it and the load-balancing
// auxiliary loss, as the layer HiDup's SGMoE/Switch workloads put in every other encoder layer.
// Replicated (every rank holds every expert: DDP) or expert-parallel (each rank holds
// experts/world of them and tokens travel to their expert and back by all-to-all, as
// DeepSpeed-MoE and FastMoE do).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/linear.h>
#include <torch/types.h>

#include <cstdint>
#include <vector>

#include "runtime/comm/communicator.h"
#include "runtime/protocol/trace_recorder.h"

namespace runtime {

// The weight training gives a mixture's load-balancing loss (Switch Transformer's 1e-2).
inline constexpr double kLoadBalanceLossWeight = 1e-2;

struct MoeOptions {
  int64_t experts = 4;
  int64_t top_k = 2;  // 1: Switch (the router's probability), 2: GShard (the pair renormalised)
  double capacity_factor = 1.25;  // tokens an expert takes: ceil(factor x tokens x k / experts)
  // Tokens are routed in this many equal groups (GShard's groups), each with its own capacity
  // and balancing loss (averaged): what ranks that route their own batch amount to, so one
  // process with groups = world trains as world ranks do.
  int64_t groups = 1;
  // Expert parallelism: this layer holds experts [shard x E/shards, (shard + 1) x E/shards);
  // the rest live on the other ranks of the communicator given to set_expert_group.
  int64_t shard = 0;
  int64_t shards = 1;
  // The width of each expert's hidden layer as this layer holds it: 0, the whole 4 x hidden; a
  // share of it where the ranks split every expert's hidden layer (an SPMD "column" mixture).
  int64_t expert_width = 0;
};

// Tokens [..., hidden] -> [..., hidden]. Each token goes to its top_k experts (a 4x GELU
// feed-forward each), weighted by its gate; first choices claim capacity before second ones,
// in token order, and a choice beyond its expert's capacity is dropped (it adds nothing: the
// encoder layer's residual carries the token on).
class MoeFeedForwardImpl : public torch::nn::Module {
 public:
  MoeFeedForwardImpl(int64_t hidden, MoeOptions options);
  torch::Tensor forward(torch::Tensor x);

  // Expert weights N(0, std) from one generator per expert seeded `seed + global index`, so
  // an expert starts the same whichever rank holds it; biases zero.
  void initialize_experts(uint64_t seed, double std);
  // Sharded layers: the ranks that hold the other experts (rank r holds shard r).
  void set_expert_group(Communicator* group) { group_ = group; }
  // Where the dispatch and combine all-to-alls are recorded (named after `name`).
  void set_trace(TraceRecorder* trace, std::string name) {
    trace_ = trace;
    trace_name_ = std::move(name);
  }

  // Of the last forward: the Switch load-balancing loss, experts x sum_e f_e P_e (f_e: the
  // share of tokens whose first choice is e, before capacity; P_e: the mean router probability
  // of e), 1 when balanced, averaged over groups; and the choices dropped for capacity.
  torch::Tensor auxiliary_loss() const { return auxiliary_loss_; }
  int64_t dropped_choices() const { return dropped_; }
  const MoeOptions& options() const { return options_; }
  int64_t capacity(int64_t tokens) const;
  int64_t first_local_expert() const { return options_.shard * local_experts(); }
  int64_t local_experts() const { return options_.experts / options_.shards; }

  torch::nn::Linear router{nullptr};
  // This rank's experts (all of them unless sharded), each Sequential(Linear(h, 4h), GELU,
  // Linear(4h, h)).
  torch::nn::ModuleList experts{nullptr};

 private:
  struct Routing;
  Routing route(const torch::Tensor& top_experts, int64_t count);
  torch::Tensor dispatch(const torch::Tensor& tokens, const Routing& routing);
  torch::Tensor run_experts(const torch::Tensor& arrived,
                            const std::vector<std::vector<int64_t>>& rows_of_expert);

  MoeOptions options_;
  Communicator* group_ = nullptr;
  TraceRecorder* trace_ = nullptr;
  std::string trace_name_;
  torch::Tensor auxiliary_loss_;
  int64_t dropped_ = 0;
};
TORCH_MODULE(MoeFeedForward);

// The mixtures inside `model`, in module order (none for a dense model).
std::vector<MoeFeedForwardImpl*> mixtures_of(torch::nn::Module& model);
// Their experts' parameters: what expert parallelism shards rather than replicates.
std::vector<torch::Tensor> expert_parameters(torch::nn::Module& model);
// Whether `parameter` is one of `experts` (the same tensor, not an equal one).
bool is_expert_parameter(const std::vector<torch::Tensor>& experts, const torch::Tensor& parameter);
// The sum of the mixtures' load-balancing losses of their last forward; undefined when none
// has one.
torch::Tensor summed_auxiliary_loss(const std::vector<MoeFeedForwardImpl*>& mixtures);

}  // namespace runtime
