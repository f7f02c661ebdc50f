// The zoo's llama, bert, bert_moe, vit or vit_moe trained under a searched SPMD strategy
// (planner/spmd, `harness spmd --out`): each operator of the plan runs on this rank's part of its
// inputs with this rank's part of its weights, as its signature says (whole; Megatron's column or
// row; the attention's heads; the embedding's vocabulary rows or features, ViT's class token and
// positions by features; the loss over a vocabulary or class shard), and between operators
// reshard() changes each tensor into the form its consumer takes, and its gradient back. Weights
// whose operator ran on a batch or token shard have their gradients summed after backward, in 25
// MiB buckets. From the same seed and batch it trains as one process.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "runtime/comm/communicator.h"
#include "runtime/models/model_zoo.h"
#include "runtime/parallel/spmd_mixture.h"
#include "runtime/parallel/spmd_plan.h"
#include "runtime/parallel/spmd_weights.h"
#include "runtime/protocol/trace_recorder.h"

namespace runtime {

class SpmdTransformer {
 public:
  // `whole`: the model built whole from the seed (make_model), whose weights this rank
  // copies its parts of (runtime/parallel/spmd_weights.h; bert_moe's mixtures:
  // runtime/parallel/spmd_mixture.h); `steps`: the plan's, for this model's operators; `group`:
  // every rank of the plan, outliving this object; `loss`: the model's (cross_entropy; bert's may
  // be mse). Throws std::invalid_argument where the plan names a weight the model lacks.
  SpmdTransformer(ZooModel& whole, std::vector<SpmdStep> steps, Communicator& group,
                  std::string loss = "cross_entropy");

  // The forward of one global batch (token ids and next tokens, both [batch, tokens]; vit's
  // images and classes), every
  // rank the same batch: the loss whose backward gives this rank's gradients, and whose value is
  // the batch's mean next-token loss (with the mixtures' load-balancing losses weighted as
  // Switch Transformer's) on every rank once finish_backward has run (a batch or token shard's
  // part is summed with the gradients).
  at::Tensor forward_loss(const at::Tensor& ids, const at::Tensor& targets);
  // After backward: the gradients the plan sums (batch and token shards' weights) summed.
  void finish_backward();
  // forward_loss, backward, finish_backward; the loss's value.
  double train_step(const at::Tensor& ids, const at::Tensor& targets);

  // Each operator's forward and backward on this rank's part of its inputs, timed alone (the
  // inputs the forward of `ids` hands it, its output's gradient ones; the resharding between
  // operators left out), the median of `repetitions` after one unmeasured: what HiDup's cost
  // model profiles. In the plan's order, the loss's backward from its value. `before_each` runs
  // before every run of an operator (co-located copies' lockstep barrier). Each also as the
  // process's CPU time (every thread's), the median likewise: what it computed, where copies that
  // share cores wait for one.
  struct OperatorSeconds {
    double forward = 0, backward = 0;
    double forward_cpu = 0, backward_cpu = 0;
  };
  std::vector<OperatorSeconds> time_operators(const at::Tensor& ids, const at::Tensor& targets,
                                              int repetitions,
                                              const std::function<void()>& before_each = {});

  // Where the plan's collectives and the gradients' sums are recorded (outliving this object).
  void set_trace(TraceRecorder* trace);

  // This rank's weights, for its optimizer.
  std::vector<at::Tensor> parameters() const;
  // Of them, the mixtures' experts' (for the memory table).
  std::vector<at::Tensor> expert_parameters() const;
  // Every weight whole under the zoo's names, the ranks' parts gathered: every rank calls it.
  std::map<std::string, at::Tensor> whole_parameters();

 private:
  void read_decoder_shape(const std::map<std::string, at::Tensor>& zoo);
  void read_encoder_shape(const std::map<std::string, at::Tensor>& zoo);
  OperatorSeconds time_operator(const SpmdStep& step, const std::vector<at::Tensor>& inputs,
                                const at::Tensor& ids, const at::Tensor& targets, int repetitions,
                                const std::function<void()>& before_each, at::Tensor& output);
  at::Tensor run_step(const SpmdStep& step, const std::vector<at::Tensor>& inputs,
                      const at::Tensor& ids, const at::Tensor& targets);
  at::Tensor embedding(const SpmdStep& step, const at::Tensor& ids,
                       const OperatorWeights& weights) const;
  at::Tensor class_token_and_positions(const at::Tensor& patches,
                                       const OperatorWeights& weights) const;
  at::Tensor linear(const SpmdStep& step, at::Tensor x, const OperatorWeights& weights) const;
  at::Tensor attention(const SpmdStep& step, const at::Tensor& qkv) const;
  at::Tensor activation(const SpmdStep& step, const at::Tensor& x) const;
  at::Tensor loss(const SpmdStep& step, const at::Tensor& logits, const at::Tensor& targets);
  bool partial_loss(const SpmdStep& step) const;
  void sum_bucket(const std::vector<at::Tensor>& gradients);
  void take_mixture(const SpmdStep& step, ZooModel& whole,
                    const std::map<std::string, at::Tensor>& zoo);
  at::Tensor add_auxiliary_losses(const at::Tensor& task, bool task_is_part);

  // Gradients summed a bucket at a time, as DDP's 25 MiB (what the search prices).
  static constexpr int64_t kGradientBucketBytes = int64_t{25} << 20;

  std::vector<SpmdStep> steps_;
  Communicator& group_;
  std::string loss_;  // cross_entropy, or mse (bert)
  ZooFamily family_ = ZooFamily::kLlama;
  TraceRecorder* trace_ = nullptr;
  // The last forward's loss as returned, and its value's parts: those the ranks hold parts of
  // (summed with the gradients; undefined where none) and those every rank holds whole.
  at::Tensor shown_loss_, loss_parts_, whole_loss_;
  std::map<std::string, OperatorWeights> weights_;  // by operator
  std::map<std::string, SpmdMixture> mixtures_;     // by operator
  at::Tensor rope_cos_, rope_sin_;
  int64_t heads_ = 0, kv_heads_ = 0, head_width_ = 0;
  // Row groups of the fused projections: the ranks where the heads (the feed-forward width)
  // divide over them, else 1.
  int64_t attention_groups_ = 1, feed_forward_groups_ = 1;
};

}  // namespace runtime
