#include "runtime/parallel/spmd_weights.h"

#include <torch/torch.h>

#include <stdexcept>

#include "runtime/parallel/reshard.h"

namespace runtime {
namespace {

using harness::spmd::OperatorKind;
using harness::spmd::SignatureKind;

std::vector<WeightPart> whole_parts(std::initializer_list<std::string> names) {
  std::vector<WeightPart> parts;
  for (const auto& name : names) parts.push_back({name, 0, 1});
  return parts;
}

ZooParts llama_parts(const std::string& block, const std::string& what) {
  const std::string attention = block + ".self_attn.", mlp = block + ".mlp.";
  if (what == "attention_norm") return {whole_parts({block + ".input_layernorm.weight"}), {}};
  if (what == "ffn_norm") return {whole_parts({block + ".post_attention_layernorm.weight"}), {}};
  if (what == "qkv") {
    return {whole_parts({attention + "q_proj.weight", attention + "k_proj.weight",
                         attention + "v_proj.weight"}),
            {}};
  }
  if (what == "output") return {whole_parts({attention + "o_proj.weight"}), {}};
  if (what == "gate_up") {
    return {whole_parts({mlp + "gate_proj.weight", mlp + "up_proj.weight"}), {}};
  }
  if (what == "down") return {whole_parts({mlp + "down_proj.weight"}), {}};
  return {};
}

// A module's weight and bias, whole.
ZooParts with_bias(const std::string& module) {
  return {whole_parts({module + ".weight"}), whole_parts({module + ".bias"})};
}

ZooParts bert_parts(const std::string& block, const std::string& what) {
  if (what == "qkv") {  // one fused tensor, its three parts laid out like llama's three
    ZooParts parts;
    for (int64_t part = 0; part < 3; ++part) {
      parts.weight.push_back({block + ".qkv.weight", part, 3});
      parts.bias.push_back({block + ".qkv.bias", part, 3});
    }
    return parts;
  }
  static const std::map<std::string, std::string> modules = {{"output", "attention_output"},
                                                             {"attention_norm", "attention_norm"},
                                                             {"fc1", "intermediate"},
                                                             {"fc2", "output"},
                                                             {"output_norm", "output_norm"}};
  const auto found = modules.find(what);
  return found == modules.end() ? ZooParts{} : with_bias(block + "." + found->second);
}

// ViT's operators outside its blocks, as the zoo names their modules.
ZooParts vit_parts(const std::string& op) {
  if (op == "embeddings") {
    return {whole_parts({"embeddings.class_token", "embeddings.positions"}), {}};
  }
  if (op == "embeddings.projection" || op == "head.norm" || op == "head.classifier") {
    return with_bias(op);
  }
  return {};
}

}  // namespace

ZooParts zoo_parts(const std::string& op, ZooFamily family) {
  const bool encoder = family != ZooFamily::kLlama;
  if (family == ZooFamily::kVit && !op.starts_with("encoder.")) return vit_parts(op);
  if (encoder) {
    if (op == "embeddings") {
      return {whole_parts(
                  {"embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight"}),
              {}};
    }
    if (op == "embeddings_norm") return with_bias("embeddings.LayerNorm");
    if (op == "pooler") return with_bias("pooler.dense");
    if (op == "classifier") return with_bias("classifier");
  } else if (op == "embed_tokens" || op == "norm" || op == "lm_head") {
    return {whole_parts({op + ".weight"}), {}};
  }
  const auto dot = op.rfind('.');
  if (dot == std::string::npos) return {};
  const std::string block = op.substr(0, dot), what = op.substr(dot + 1);
  return encoder ? bert_parts(block, what) : llama_parts(block, what);
}

int weight_split(const SpmdStep& step) {
  if (step.signature == SignatureKind::kVocab) return 0;
  if (step.signature == SignatureKind::kColumn) {
    return step.kind == OperatorKind::kEmbedding ? 1 : 0;
  }
  if (step.signature == SignatureKind::kRow || step.signature == SignatureKind::kFeatures) return 1;
  return -1;
}

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

namespace {

SpmdWeight take_one(const std::string& op, const std::vector<WeightPart>& parts,
                    const std::map<std::string, at::Tensor>& zoo, const Communicator& group,
                    int64_t groups, int split) {
  std::vector<at::Tensor> tensors;
  SpmdWeight weight{parts, {}, groups, split, {}};
  for (const WeightPart& part : parts) {
    const auto found = zoo.find(part.name);
    if (found == zoo.end()) {
      throw std::invalid_argument("spmd plan operator '" + op + "': the model has no " + part.name);
    }
    tensors.push_back(found->second.chunk(part.chunks, 0)[part.chunk]);
    weight.part_rows.push_back(tensors.back().size(0));
  }
  weight.local = grouped(tensors, groups);
  if (split >= 0) {
    const int64_t size = weight.local.size(split) / group.world_size();
    weight.local = weight.local.narrow(split, group.rank() * size, size);
  }
  weight.local = weight.local.clone().set_requires_grad(true);
  return weight;
}

}  // namespace

OperatorWeights take_weights(const SpmdStep& step, const ZooParts& parts,
                             const std::map<std::string, at::Tensor>& zoo,
                             const Communicator& group, int64_t groups) {
  const int split = weight_split(step);
  OperatorWeights weights{take_one(step.name, parts.weight, zoo, group, groups, split), {}, false};
  if (!parts.bias.empty()) {
    // A bias splits with its weight's output rows; beside a row split it is whole, added once.
    weights.bias = take_one(step.name, parts.bias, zoo, group, groups, split == 0 ? 0 : -1);
    weights.bias_once = split == 1;
  }
  return weights;
}

void add_whole(const SpmdWeight& weight, Communicator& group,
               std::map<std::string, std::vector<at::Tensor>>& chunks_by_name) {
  at::Tensor joined = weight.local.detach();
  if (weight.split >= 0) {
    joined = change_form(group, joined, harness::spmd::sharded(weight.split),
                         harness::spmd::kReplicated);
  }
  const auto parts = ungrouped(joined, weight.part_rows, weight.groups);
  for (size_t p = 0; p < parts.size(); ++p) {
    auto& chunks = chunks_by_name[weight.parts[p].name];
    chunks.resize(static_cast<size_t>(weight.parts[p].chunks));
    chunks[static_cast<size_t>(weight.parts[p].chunk)] = parts[p];
  }
}

}  // namespace runtime
