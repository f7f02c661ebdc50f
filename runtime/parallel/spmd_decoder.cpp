#include "runtime/parallel/spmd_decoder.h"

#include <torch/torch.h>

#include <stdexcept>

#include "runtime/models/attention_core.h"
#include "runtime/models/llama.h"
#include "runtime/parallel/reshard.h"

namespace runtime {
namespace {

using harness::spmd::FormKind;
using harness::spmd::kPartial;
using harness::spmd::kReplicated;
using harness::spmd::OperatorKind;
using harness::spmd::sharded;
using harness::spmd::SignatureKind;

bool ends_with(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

// The zoo's weights behind an operator of the plan's llama graph (planner/spmd's names).
std::vector<std::string> zoo_parts(const std::string& op) {
  if (op == "embed_tokens" || op == "norm" || op == "lm_head") return {op + ".weight"};
  const auto dot = op.rfind('.');
  if (dot == std::string::npos) return {};
  const std::string block = op.substr(0, dot), what = op.substr(dot + 1);
  if (what == "attention_norm") return {block + ".input_layernorm.weight"};
  if (what == "ffn_norm") return {block + ".post_attention_layernorm.weight"};
  const std::string attention = block + ".self_attn.", mlp = block + ".mlp.";
  if (what == "qkv") {
    return {attention + "q_proj.weight", attention + "k_proj.weight", attention + "v_proj.weight"};
  }
  if (what == "output") return {attention + "o_proj.weight"};
  if (what == "gate_up") return {mlp + "gate_proj.weight", mlp + "up_proj.weight"};
  if (what == "down") return {mlp + "down_proj.weight"};
  return {};
}

// The parts stacked row-wise group by group: group j holds each part's j-th chunk of rows.
at::Tensor grouped(const std::vector<at::Tensor>& parts, int64_t groups) {
  if (parts.size() == 1) return parts[0];
  std::vector<at::Tensor> rows;
  for (int64_t j = 0; j < groups; ++j) {
    for (const auto& part : parts) rows.push_back(part.chunk(groups, 0)[j]);
  }
  return torch::cat(rows, 0);
}

std::vector<at::Tensor> ungrouped(const at::Tensor& whole, const std::vector<int64_t>& rows,
                                  int64_t groups) {
  if (rows.size() == 1) return {whole};
  std::vector<int64_t> shares;
  for (int64_t r : rows) shares.push_back(r / groups);
  std::vector<std::vector<at::Tensor>> by_part(rows.size());
  for (const auto& group : whole.chunk(groups, 0)) {
    const auto pieces = group.split_with_sizes(shares, 0);
    for (size_t p = 0; p < rows.size(); ++p) by_part[p].push_back(pieces[p]);
  }
  std::vector<at::Tensor> parts;
  for (const auto& pieces : by_part) parts.push_back(torch::cat(pieces, 0));
  return parts;
}

// Which dimension of its weight an operator's signature splits: a projection's rows for
// "column" (its output features), its columns for "row"; the embedding table's rows for "vocab"
// and its columns for "column" (the features it looks up). -1: whole.
int weight_split(const SpmdStep& step) {
  if (step.signature == SignatureKind::kVocab) return 0;
  if (step.signature == SignatureKind::kColumn)
    return step.kind == OperatorKind::kEmbedding ? 1 : 0;
  if (step.signature == SignatureKind::kRow) return 1;
  return -1;
}

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

std::map<std::string, at::Tensor> named_tensors(const ZooModel& model) {
  std::map<std::string, at::Tensor> tensors;
  for (const auto& item : model.named_parameters()) tensors[item.key()] = item.value().detach();
  for (const auto& item : model.named_buffers()) tensors[item.key()] = item.value().detach();
  return tensors;
}

SpmdDecoder::Weight weight_of(const SpmdStep& step, const std::vector<std::string>& names,
                              const std::map<std::string, at::Tensor>& zoo,
                              const Communicator& group, int64_t groups) {
  std::vector<at::Tensor> parts;
  std::vector<int64_t> rows;
  for (const auto& name : names) {
    parts.push_back(zoo.at(name));
    rows.push_back(parts.back().size(0));
  }
  SpmdDecoder::Weight weight{names, rows, groups, grouped(parts, groups), weight_split(step)};
  if (weight.split >= 0) {
    const int64_t size = weight.local.size(weight.split) / group.world_size();
    weight.local = weight.local.narrow(weight.split, group.rank() * size, size);
  }
  weight.local = weight.local.clone().set_requires_grad(true);
  return weight;
}

// The batch's next-token loss over a vocabulary shard (Megatron's vocabulary-parallel cross
// entropy): the maximum and the sum of exponentials over every rank's logits, the target's logit
// from the rank that holds it; every rank the whole loss.
at::Tensor vocabulary_loss(Communicator& group, const at::Tensor& logits, const at::Tensor& targets,
                           double total_tokens) {
  const int64_t width = logits.size(-1), first = group.rank() * width;
  const at::Tensor local_max = logits.detach().amax(-1, /*keepdim=*/true);
  const at::Tensor max = change_form(group, local_max, sharded(2), kReplicated).amax(-1, true);
  const at::Tensor shifted = logits - max;
  const at::Tensor sum =
      reshard(group, shifted.exp().sum(-1), kPartial, kReplicated, kReplicated, kReplicated);
  const at::Tensor held = (targets >= first) & (targets < first + width);
  const at::Tensor index = (targets - first).clamp(0, width - 1).unsqueeze(-1);
  const at::Tensor picked = shifted.gather(-1, index).squeeze(-1) * held;
  const at::Tensor target = reshard(group, picked, kPartial, kReplicated, kReplicated, kReplicated);
  return (sum.log() - target).sum() / total_tokens;
}

// The loss of this rank's logits: a batch or token shard's part of the mean, the whole mean, or
// over a vocabulary shard.
at::Tensor loss_of(Communicator& group, const SpmdStep& step, const at::Tensor& logits,
                   const at::Tensor& targets) {
  const double total = static_cast<double>(targets.numel());
  if (step.signature == SignatureKind::kVocab) {
    return vocabulary_loss(group, logits, targets, total);
  }
  const auto form = step.inputs.at(0).form;
  const at::Tensor own =
      form.kind == FormKind::kSharded ? change_form(group, targets, kReplicated, form) : targets;
  return torch::nn::functional::cross_entropy(
             logits.flatten(0, 1), own.flatten(),
             torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum)) /
         total;
}

// Token ids looked up in this rank's rows of the table [first, first + rows): the others give
// zeros, a partial sum over the ranks.
at::Tensor vocabulary_lookup(const Communicator& group, const at::Tensor& ids,
                             const at::Tensor& table) {
  const int64_t rows = table.size(0), first = group.rank() * rows;
  const at::Tensor held = ((ids >= first) & (ids < first + rows)).unsqueeze(-1);
  return torch::embedding(table, (ids - first).clamp(0, rows - 1)) * held;
}

}  // namespace

SpmdDecoder::SpmdDecoder(ZooModel& whole, std::vector<SpmdStep> steps, Communicator& group)
    : steps_(std::move(steps)), group_(group) {
  const auto zoo = named_tensors(whole);
  rope_cos_ = zoo.at("layers.0.self_attn.rope_cos");
  rope_sin_ = zoo.at("layers.0.self_attn.rope_sin");
  head_width_ = rope_cos_.size(1);
  heads_ = zoo.at("layers.0.self_attn.q_proj.weight").size(0) / head_width_;
  kv_heads_ = zoo.at("layers.0.self_attn.k_proj.weight").size(0) / head_width_;
  const int64_t ranks = group.world_size();
  attention_groups_ = heads_ % ranks == 0 && kv_heads_ % ranks == 0 ? ranks : 1;
  feed_forward_groups_ = zoo.at("layers.0.mlp.gate_proj.weight").size(0) % ranks == 0 ? ranks : 1;
  for (const SpmdStep& step : steps_) {
    const auto names = zoo_parts(step.name);
    for (const auto& name : names) {
      if (!zoo.count(name)) {
        throw std::invalid_argument("spmd plan operator '" + step.name + "': the model has no " +
                                    name);
      }
    }
    const int64_t groups = ends_with(step.name, ".qkv")       ? attention_groups_
                           : ends_with(step.name, ".gate_up") ? feed_forward_groups_
                                                              : 1;
    if (!names.empty()) weights_.emplace(step.name, weight_of(step, names, zoo, group, groups));
  }
}

at::Tensor SpmdDecoder::attention(const SpmdStep& step, const at::Tensor& qkv) const {
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
  const at::Tensor cos = rope_cos_.narrow(0, 0, tokens), sin = rope_sin_.narrow(0, 0, tokens);
  const at::Tensor queries = apply_rotary(heads_of(parts[0], heads), cos, sin);
  at::Tensor keys = apply_rotary(heads_of(parts[1], kv_heads), cos, sin);
  at::Tensor values = heads_of(parts[2], kv_heads);
  if (kv_heads < heads) {
    keys = keys.repeat_interleave(heads / kv_heads, 1);
    values = values.repeat_interleave(heads / kv_heads, 1);
  }
  return attention_core(queries, keys, values, /*causal=*/true)
      .transpose(1, 2)
      .reshape({batch, tokens, heads * head_width_});
}

at::Tensor SpmdDecoder::run_step(const SpmdStep& step, const std::vector<at::Tensor>& inputs,
                                 const at::Tensor& ids, const at::Tensor& targets) {
  const auto found = weights_.find(step.name);
  const at::Tensor weight = found == weights_.end() ? at::Tensor() : found->second.local;
  switch (step.kind) {
    case OperatorKind::kTokens:
      return change_form(group_, ids, kReplicated, step.output);
    case OperatorKind::kEmbedding:
      return step.signature == SignatureKind::kVocab ? vocabulary_lookup(group_, inputs[0], weight)
                                                     : torch::embedding(weight, inputs[0]);
    case OperatorKind::kNorm:
      return rms_norm(inputs[0], weight);
    case OperatorKind::kLinear:
      return torch::nn::functional::linear(inputs[0], weight);
    case OperatorKind::kAttention:
      return attention(step, inputs[0]);
    case OperatorKind::kActivation:
      return swiglu(step, inputs[0]);
    case OperatorKind::kAdd:
      return inputs[0] + inputs[1];
    case OperatorKind::kLoss:
      return loss_of(group_, step, inputs[0], targets);
    case OperatorKind::kExperts:
      break;
  }
  throw std::invalid_argument("spmd plan operator '" + step.name + "': llama has no " +
                              harness::spmd::to_text(step.kind) + " operator");
}

at::Tensor SpmdDecoder::swiglu(const SpmdStep& step, const at::Tensor& gate_up) const {
  const int64_t groups = step.signature == SignatureKind::kFeatures ? 1 : feed_forward_groups_;
  const int64_t width = gate_up.size(-1) / groups / 2;
  const auto halves = split_groups(gate_up, groups, {width, width});
  return torch::silu(halves[0]) * halves[1];
}

at::Tensor SpmdDecoder::forward_loss(const at::Tensor& ids, const at::Tensor& targets) {
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
    // A shard's loss is its part of the mean, summed with the first bucket of gradients (no
    // collective of its own in forward): its value is the whole once finish_backward ran.
    partial_loss_ =
        harness::spmd::sums_weight_gradients(step.signature) ? out.detach() : at::Tensor();
    return out;
  }
  throw std::invalid_argument("spmd plan: no loss operator");
}

void SpmdDecoder::finish_backward() {
  std::vector<at::Tensor> bucket;
  if (partial_loss_.defined()) bucket.push_back(partial_loss_);
  int64_t bucket_bytes = 0;
  for (const SpmdStep& step : steps_) {
    if (!harness::spmd::sums_weight_gradients(step.signature) || !weights_.count(step.name)) {
      continue;
    }
    at::Tensor& weight = weights_.at(step.name).local;
    bucket.push_back(weight.mutable_grad());
    bucket_bytes += weight.numel() * weight.element_size();
    if (bucket_bytes >= kGradientBucketBytes) {
      sum_bucket(bucket);
      bucket.clear();
      bucket_bytes = 0;
    }
  }
  sum_bucket(bucket);
}

// One all-reduce for the bucket's gradients, flattened together (DDP's coalescing).
void SpmdDecoder::sum_bucket(const std::vector<at::Tensor>& gradients) {
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

double SpmdDecoder::train_step(const at::Tensor& ids, const at::Tensor& targets) {
  const at::Tensor loss = forward_loss(ids, targets);
  loss.backward();
  finish_backward();
  return loss.item<double>();
}

std::vector<at::Tensor> SpmdDecoder::parameters() const {
  std::vector<at::Tensor> out;
  for (const auto& [name, weight] : weights_) out.push_back(weight.local);
  return out;
}

std::map<std::string, at::Tensor> SpmdDecoder::whole_parameters() {
  std::map<std::string, at::Tensor> whole;
  for (const auto& [name, weight] : weights_) {
    at::Tensor joined = weight.local.detach();
    if (weight.split >= 0) joined = change_form(group_, joined, sharded(weight.split), kReplicated);
    const auto parts = ungrouped(joined, weight.part_rows, weight.groups);
    for (size_t p = 0; p < parts.size(); ++p) whole[weight.parts[p]] = parts[p];
  }
  return whole;
}

}  // namespace runtime
