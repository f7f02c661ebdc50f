#include "runtime/parallel/spmd_transformer.h"

#include <torch/torch.h>

#include <chrono>
#include <stdexcept>

#include "common/process_clock.h"
#include "common/statistics.h"
#include "runtime/models/attention_core.h"
#include "runtime/models/llama.h"
#include "runtime/parallel/reshard.h"
#include "runtime/parallel/vocabulary_parallel.h"

namespace runtime {
namespace {

using harness::spmd::FormKind;
using harness::spmd::kPartial;
using harness::spmd::kReplicated;
using harness::spmd::OperatorKind;
using harness::spmd::sharded;
using harness::spmd::SignatureKind;

// [..., groups x (parts)] -> each part's features of every group, joined: the fused layout's
// inverse for the activations a fused projection leaves.
std::vector<at::Tensor> split_groups(const at::Tensor& x, int64_t groups,
                                     const std::vector<int64_t>& part_widths) {
  std::vector<std::vector<at::Tensor>> by_part(part_widths.size());
  for (const auto& group : x.chunk(groups, -1)) {
    const auto pieces = group.split_with_sizes(part_widths, -1);
    for (size_t p = 0; p < pieces.size(); ++p) by_part[p].push_back(pieces[p]);
  }
  std::vector<at::Tensor> parts;
  for (const auto& pieces : by_part) parts.push_back(torch::cat(pieces, -1));
  return parts;
}

}  // namespace

namespace {

// ViT's class token and positions, [1, 1, width] and [1, tokens, width], as rows of a table:
// `flat` [1, width] and [tokens, width], else back.
constexpr const char* kVitTables[] = {"embeddings.class_token", "embeddings.positions"};
void reshape_vit_tables(std::map<std::string, at::Tensor>& tensors, bool flat) {
  for (const char* name : kVitTables) {
    at::Tensor& table = tensors.at(name);
    table = flat ? table.flatten(0, 1) : table.unsqueeze(0);
  }
}

std::map<std::string, at::Tensor> named_tensors(const ZooModel& model) {
  std::map<std::string, at::Tensor> tensors;
  for (const auto& item : model.named_parameters()) tensors[item.key()] = item.value().detach();
  for (const auto& item : model.named_buffers()) tensors[item.key()] = item.value().detach();
  return tensors;
}

ZooFamily family_of(const std::map<std::string, at::Tensor>& zoo) {
  if (zoo.count("embeddings.word_embeddings.weight")) return ZooFamily::kBert;
  return zoo.count("embeddings.projection.weight") ? ZooFamily::kVit : ZooFamily::kLlama;
}

}  // namespace

SpmdTransformer::SpmdTransformer(ZooModel& whole, std::vector<SpmdStep> steps, Communicator& group,
                                 std::string loss)
    : steps_(std::move(steps)), group_(group), loss_(std::move(loss)) {
  auto zoo = named_tensors(whole);
  family_ = family_of(zoo);
  if (family_ == ZooFamily::kVit) reshape_vit_tables(zoo, /*flat=*/true);
  family_ == ZooFamily::kLlama ? read_decoder_shape(zoo) : read_encoder_shape(zoo);
  for (const SpmdStep& step : steps_) {
    if (step.kind == OperatorKind::kExperts) {
      take_mixture(step, whole, zoo);
      continue;
    }
    const ZooParts parts = zoo_parts(step.name, family_);
    if (parts.weight.empty()) continue;
    const int64_t groups = step.name.ends_with(".qkv")       ? attention_groups_
                           : step.name.ends_with(".gate_up") ? feed_forward_groups_
                                                             : 1;
    weights_.emplace(step.name, take_weights(step, parts, zoo, group, groups));
  }
}

// The zoo's layer behind a mixture operator: "encoder.layer.1.experts" is "encoder.layer.1.moe".
void SpmdTransformer::take_mixture(const SpmdStep& step, ZooModel& whole,
                                   const std::map<std::string, at::Tensor>& zoo) {
  const std::string module = step.name.substr(0, step.name.rfind('.')) + ".moe";
  for (const auto& item : whole.named_modules()) {
    const auto* layer = item.value()->as<MoeFeedForwardImpl>();
    if (item.key() != module || layer == nullptr) continue;
    mixtures_.emplace(std::piecewise_construct, std::forward_as_tuple(step.name),
                      std::forward_as_tuple(step, *layer, module, zoo, group_));
    return;
  }
  throw std::invalid_argument("spmd plan operator '" + step.name + "': the model has no " + module);
}

void SpmdTransformer::set_trace(TraceRecorder* trace) {
  trace_ = trace;
  for (auto& [name, mixture] : mixtures_) mixture.set_trace(trace, "spmd " + name);
}

void SpmdTransformer::read_decoder_shape(const std::map<std::string, at::Tensor>& zoo) {
  rope_cos_ = zoo.at("layers.0.self_attn.rope_cos");
  rope_sin_ = zoo.at("layers.0.self_attn.rope_sin");
  head_width_ = rope_cos_.size(1);
  heads_ = zoo.at("layers.0.self_attn.q_proj.weight").size(0) / head_width_;
  kv_heads_ = zoo.at("layers.0.self_attn.k_proj.weight").size(0) / head_width_;
  const int64_t ranks = group_.world_size();
  attention_groups_ = heads_ % ranks == 0 && kv_heads_ % ranks == 0 ? ranks : 1;
  feed_forward_groups_ = zoo.at("layers.0.mlp.gate_proj.weight").size(0) % ranks == 0 ? ranks : 1;
}

// BERT's and ViT's heads are 64 wide (runtime/models/model_zoo.cpp).
void SpmdTransformer::read_encoder_shape(const std::map<std::string, at::Tensor>& zoo) {
  head_width_ = 64;
  const int64_t width = family_ == ZooFamily::kVit
                            ? zoo.at("embeddings.projection.weight").size(0)
                            : zoo.at("embeddings.word_embeddings.weight").size(1);
  heads_ = kv_heads_ = width / head_width_;
  attention_groups_ = heads_ % group_.world_size() == 0 ? group_.world_size() : 1;
}

at::Tensor SpmdTransformer::attention(const SpmdStep& step, const at::Tensor& qkv) const {
  // A feature shard holds one rank's group of heads; any other form every group.
  const int64_t layout = attention_groups_;
  const int64_t groups = step.signature == SignatureKind::kHeads ? 1 : layout;
  const int64_t heads = heads_ / layout * groups, kv_heads = kv_heads_ / layout * groups;
  const auto parts = split_groups(qkv, groups,
                                  {heads_ / layout * head_width_, kv_heads_ / layout * head_width_,
                                   kv_heads_ / layout * head_width_});
  const int64_t batch = qkv.size(0), tokens = qkv.size(1);
  auto heads_of = [&](const at::Tensor& t, int64_t count) {
    return t.reshape({batch, tokens, count, head_width_}).transpose(1, 2);
  };
  at::Tensor queries = heads_of(parts[0], heads), keys = heads_of(parts[1], kv_heads);
  at::Tensor values = heads_of(parts[2], kv_heads);
  const bool llama = family_ == ZooFamily::kLlama;
  if (llama) {  // rotary positions, grouped-query heads, causal
    const at::Tensor cos = rope_cos_.narrow(0, 0, tokens), sin = rope_sin_.narrow(0, 0, tokens);
    queries = apply_rotary(queries, cos, sin);
    keys = apply_rotary(keys, cos, sin);
    keys = keys.repeat_interleave(heads / kv_heads, 1);
    values = values.repeat_interleave(heads / kv_heads, 1);
  }
  return attention_core(queries, keys, values, /*causal=*/llama)
      .transpose(1, 2)
      .reshape({batch, tokens, heads * head_width_});
}

// llama's token rows; bert's position rows after its words' (a token shard's positions its own).
at::Tensor SpmdTransformer::embedding(const SpmdStep& step, const at::Tensor& ids,
                                      const OperatorWeights& weights) const {
  const at::Tensor& table = weights.weight.local;
  const auto look_up = [&](const at::Tensor& rows) {
    return step.signature == SignatureKind::kVocab ? vocabulary_lookup(group_, rows, table)
                                                   : torch::embedding(table, rows);
  };
  if (family_ == ZooFamily::kLlama) return look_up(ids);
  const int64_t tokens = ids.size(1), words = weights.weight.part_rows[0];
  const bool token_shard = step.inputs[0].form == sharded(1);
  const int64_t first = words + (token_shard ? group_.rank() * tokens : 0);
  const at::Tensor positions = torch::arange(first, first + tokens, ids.options());
  return look_up(ids) + look_up(positions.unsqueeze(0).expand_as(ids));
}

// ViT's class token in front of the projected patches and the positions added, on this rank's
// samples, or its features of every sample (its columns of both tables).
at::Tensor SpmdTransformer::class_token_and_positions(const at::Tensor& patches,
                                                      const OperatorWeights& weights) const {
  const at::Tensor& table = weights.weight.local;  // [1 + tokens, features]: class, positions
  const at::Tensor class_token = table.narrow(0, 0, 1).unsqueeze(0);
  const at::Tensor positions = table.narrow(0, 1, table.size(0) - 1).unsqueeze(0);
  return torch::cat({class_token.expand({patches.size(0), 1, -1}), patches}, 1) + positions;
}

at::Tensor SpmdTransformer::linear(const SpmdStep& step, at::Tensor x,
                                   const OperatorWeights& weights) const {
  // BERT's pooler and ViT's classifier read the first token.
  if (step.name == "pooler" || step.name == "head.classifier") x = x.narrow(1, 0, 1);
  at::Tensor bias;
  if (weights.bias && (!weights.bias_once || group_.rank() == 0)) bias = weights.bias->local;
  return torch::nn::functional::linear(x, weights.weight.local, bias);
}

at::Tensor SpmdTransformer::activation(const SpmdStep& step, const at::Tensor& x) const {
  if (step.name.ends_with(".swiglu")) {
    const int64_t groups = step.signature == SignatureKind::kFeatures ? 1 : feed_forward_groups_;
    const int64_t width = x.size(-1) / groups / 2;
    const auto halves = split_groups(x, groups, {width, width});
    return torch::silu(halves[0]) * halves[1];
  }
  if (step.name.ends_with(".gelu")) return torch::gelu(x);
  if (step.name == "pooler_tanh") return torch::tanh(x);
  throw std::invalid_argument("spmd plan operator '" + step.name + "': no such activation");
}

// The loss of this rank's logits: a batch or token shard's part of the mean, the whole mean, or
// over a vocabulary (classes') shard. Targets as the logits' leading dimensions (bert's [batch]
// as [batch, 1]); mse's as the logits.
at::Tensor SpmdTransformer::loss(const SpmdStep& step, const at::Tensor& logits,
                                 const at::Tensor& targets) {
  const bool mse = loss_ == "mse";
  at::Tensor shaped = targets;  // bert's one position a sample: [batch] as [batch, 1]
  while (shaped.dim() < logits.dim() - (mse ? 0 : 1)) shaped = shaped.unsqueeze(1);
  const double total = static_cast<double>(targets.numel());
  if (step.signature == SignatureKind::kVocab && !mse) {
    return vocabulary_cross_entropy(group_, logits, shaped, total);
  }
  const auto form = step.inputs.at(0).form;
  const at::Tensor own =
      form.kind == FormKind::kSharded ? change_form(group_, shaped, kReplicated, form) : shaped;
  if (mse) return (logits - own).pow(2).sum() / total;
  return torch::nn::functional::cross_entropy(
             logits.flatten(0, -2), own.flatten(),
             torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum)) /
         total;
}

// Whether the ranks hold parts of the loss (summed with the gradients): batch or token shards,
// or mse over a shard of the classes.
bool SpmdTransformer::partial_loss(const SpmdStep& step) const {
  return harness::spmd::sums_weight_gradients(step.signature) ||
         (step.signature == SignatureKind::kVocab && loss_ == "mse");
}

at::Tensor SpmdTransformer::run_step(const SpmdStep& step, const std::vector<at::Tensor>& inputs,
                                     const at::Tensor& ids, const at::Tensor& targets) {
  const auto found = weights_.find(step.name);
  const OperatorWeights* weights = found == weights_.end() ? nullptr : &found->second;
  switch (step.kind) {
    case OperatorKind::kTokens:  // ViT's: the images' patches
      return change_form(group_, family_ == ZooFamily::kVit ? image_patches(ids) : ids, kReplicated,
                         step.output);
    case OperatorKind::kEmbedding:
      return family_ == ZooFamily::kVit ? class_token_and_positions(inputs[0], *weights)
                                        : embedding(step, inputs[0], *weights);
    case OperatorKind::kNorm:
      return weights->bias ? torch::layer_norm(inputs[0], {inputs[0].size(-1)},
                                               weights->weight.local, weights->bias->local,
                                               family_ == ZooFamily::kVit ? 1e-6 : 1e-12)
                           : rms_norm(inputs[0], weights->weight.local);
    case OperatorKind::kLinear:
      return linear(step, inputs[0], *weights);
    case OperatorKind::kAttention:
      return attention(step, inputs[0]);
    case OperatorKind::kActivation:
      return activation(step, inputs[0]);
    case OperatorKind::kAdd:
      return inputs[0] + inputs[1];
    case OperatorKind::kLoss:
      return loss(step, inputs[0], targets);
    case OperatorKind::kExperts:
      return mixtures_.at(step.name).forward(inputs[0]);
  }
  throw std::invalid_argument("spmd plan operator '" + step.name + "': no such operator");
}

at::Tensor SpmdTransformer::forward_loss(const at::Tensor& ids, const at::Tensor& targets) {
  std::map<std::string, std::pair<at::Tensor, const SpmdStep*>> produced;
  for (const SpmdStep& step : steps_) {
    std::vector<at::Tensor> inputs;
    for (const SpmdInput& input : step.inputs) {
      const auto& [tensor, from] = produced.at(input.from);
      inputs.push_back(
          reshard(group_, tensor, from->output, input.form, input.grad, from->output_grad, trace_));
    }
    const at::Tensor out = run_step(step, inputs, ids, targets);
    if (step.kind != OperatorKind::kLoss) {
      produced[step.name] = {out, &step};
      continue;
    }
    return add_auxiliary_losses(out, partial_loss(step));
  }
  throw std::invalid_argument("spmd plan: no loss operator");
}

std::vector<SpmdTransformer::OperatorSeconds> SpmdTransformer::time_operators(
    const at::Tensor& ids, const at::Tensor& targets, int repetitions,
    const std::function<void()>& before_each) {
  std::map<std::string, std::pair<at::Tensor, const SpmdStep*>> produced;
  std::vector<OperatorSeconds> seconds;
  for (const SpmdStep& step : steps_) {
    std::vector<at::Tensor> inputs;
    for (const SpmdInput& input : step.inputs) {
      const auto& [tensor, from] = produced.at(input.from);
      inputs.push_back(
          reshard(group_, tensor, from->output, input.form, input.grad, from->output_grad, nullptr)
              .detach());
    }
    at::Tensor output;
    seconds.push_back(time_operator(step, inputs, ids, targets, repetitions, before_each, output));
    produced[step.name] = {output, &step};
  }
  return seconds;
}

namespace {

double elapsed_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

// Inputs that carry values take a gradient, as they do inside the model (token ids do not).
// `output`: the last run's, detached, for the operators after it.
SpmdTransformer::OperatorSeconds SpmdTransformer::time_operator(
    const SpmdStep& step, const std::vector<at::Tensor>& inputs, const at::Tensor& ids,
    const at::Tensor& targets, int repetitions, const std::function<void()>& before_each,
    at::Tensor& output) {
  std::vector<double> forward, backward, forward_cpu, backward_cpu;
  for (int repetition = -1; repetition < repetitions; ++repetition) {
    if (before_each) before_each();
    std::vector<at::Tensor> leaves;
    for (const at::Tensor& input : inputs) {
      leaves.push_back(input.is_floating_point() ? input.detach().requires_grad_(true) : input);
    }
    const auto started = std::chrono::steady_clock::now();
    const double cpu_started_ms = harness::process_cpu_ms();
    const at::Tensor out = run_step(step, leaves, ids, targets);
    const double forward_s = elapsed_since(started);
    const double backward_cpu_started_ms = harness::process_cpu_ms();
    const auto backward_started = std::chrono::steady_clock::now();
    if (out.requires_grad()) out.backward(at::ones_like(out));
    output = out.detach();
    if (repetition < 0) continue;
    forward.push_back(forward_s);
    backward.push_back(elapsed_since(backward_started));
    forward_cpu.push_back((backward_cpu_started_ms - cpu_started_ms) / 1e3);
    backward_cpu.push_back((harness::process_cpu_ms() - backward_cpu_started_ms) / 1e3);
  }
  return {harness::percentile(forward, 50), harness::percentile(backward, 50),
          harness::percentile(forward_cpu, 50), harness::percentile(backward_cpu, 50)};
}

// The task's loss and the mixtures' weighted balancing losses. The parts the ranks hold parts of
// are summed with the first bucket of gradients (no collective of their own in forward): the
// value is the whole once finish_backward ran.
at::Tensor SpmdTransformer::add_auxiliary_losses(const at::Tensor& task, bool task_is_part) {
  at::Tensor loss = task;
  at::Tensor parts = at::zeros({}, task.options()), whole = at::zeros({}, task.options());
  bool any_part = task_is_part;
  (task_is_part ? parts : whole) += task.detach();
  for (auto& [name, mixture] : mixtures_) {
    const at::Tensor balance = kLoadBalanceLossWeight * mixture.auxiliary_loss();
    loss = loss + balance;
    (mixture.auxiliary_is_part() ? parts : whole) += balance.detach();
    any_part = any_part || mixture.auxiliary_is_part();
  }
  loss_parts_ = any_part ? parts : at::Tensor();
  whole_loss_ = whole;
  shown_loss_ = loss.detach();
  return loss;
}

void SpmdTransformer::finish_backward() {
  std::vector<at::Tensor> bucket;
  if (loss_parts_.defined()) bucket.push_back(loss_parts_);
  int64_t bucket_bytes = 0;
  const auto add = [&](const at::Tensor& tensor) {
    bucket.push_back(tensor.mutable_grad());
    bucket_bytes += tensor.numel() * tensor.element_size();
    if (bucket_bytes < kGradientBucketBytes) return;
    sum_bucket(bucket);
    bucket.clear();
    bucket_bytes = 0;
  };
  for (const SpmdStep& step : steps_) {
    if (const auto mixture = mixtures_.find(step.name); mixture != mixtures_.end()) {
      for (const at::Tensor& p : mixture->second.summed_parameters()) add(p);
    }
    if (!harness::spmd::sums_weight_gradients(step.signature) || !weights_.count(step.name)) {
      continue;
    }
    OperatorWeights& weights = weights_.at(step.name);
    add(weights.weight.local);
    if (weights.bias) add(weights.bias->local);
  }
  sum_bucket(bucket);
  if (shown_loss_.defined()) {
    shown_loss_.copy_(loss_parts_.defined() ? loss_parts_ + whole_loss_ : whole_loss_);
  }
}

// One all-reduce for the bucket's gradients, flattened together (DDP's coalescing).
void SpmdTransformer::sum_bucket(const std::vector<at::Tensor>& gradients) {
  if (gradients.empty()) return;
  const double start_us = TraceRecorder::now_us();
  std::vector<at::Tensor> flat;
  for (const auto& gradient : gradients) flat.push_back(gradient.reshape({-1}));
  at::Tensor joined = torch::cat(flat);
  group_.all_reduce_sum(joined)->wait();
  int64_t offset = 0;
  for (const auto& gradient : gradients) {
    gradient.copy_(joined.narrow(0, offset, gradient.numel()).view_as(gradient));
    offset += gradient.numel();
  }
  if (trace_ != nullptr && trace_->enabled()) {
    trace_->add("spmd gradient all-reduce", TraceCategory::kAllReduce, start_us,
                TraceRecorder::now_us(), {{"bytes", joined.numel() * joined.element_size()}});
  }
}

double SpmdTransformer::train_step(const at::Tensor& ids, const at::Tensor& targets) {
  const at::Tensor loss = forward_loss(ids, targets);
  loss.backward();
  finish_backward();
  return shown_loss_.item<double>();
}

std::vector<at::Tensor> SpmdTransformer::parameters() const {
  std::vector<at::Tensor> out;
  for (const auto& [name, weights] : weights_) {
    out.push_back(weights.weight.local);
    if (weights.bias) out.push_back(weights.bias->local);
  }
  for (const auto& [name, mixture] : mixtures_) {
    for (const at::Tensor& p : mixture.parameters()) out.push_back(p);
  }
  return out;
}

std::vector<at::Tensor> SpmdTransformer::expert_parameters() const {
  std::vector<at::Tensor> out;
  for (const auto& [name, mixture] : mixtures_) {
    for (const at::Tensor& p : mixture.expert_parameters()) out.push_back(p);
  }
  return out;
}

std::map<std::string, at::Tensor> SpmdTransformer::whole_parameters() {
  std::map<std::string, std::vector<at::Tensor>> chunks;
  for (const auto& [name, weights] : weights_) {
    add_whole(weights.weight, group_, chunks);
    if (weights.bias) add_whole(*weights.bias, group_, chunks);
  }
  std::map<std::string, at::Tensor> whole;
  for (const auto& [name, pieces] : chunks) whole[name] = torch::cat(pieces, 0);
  for (auto& [name, mixture] : mixtures_) mixture.add_whole(whole);
  if (family_ == ZooFamily::kVit) reshape_vit_tables(whole, /*flat=*/false);
  return whole;
}

}  // namespace runtime
