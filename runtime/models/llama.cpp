#include "runtime/models/llama.h"

#include <torch/torch.h>

#include <cmath>
#include <stdexcept>

#include "runtime/models/activation_checkpoint.h"
#include "runtime/models/attention_core.h"
#include "runtime/parallel/tensor_region.h"
#include "runtime/parallel/vocabulary_parallel.h"

namespace runtime {

namespace nn = torch::nn;

// Root-mean-square normalisation with a learned scale (no mean subtracted, no bias).
at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight) {
  return x * torch::rsqrt(x.pow(2).mean(-1, /*keepdim=*/true) + 1e-5) * weight;
}

// Rotary position embeddings: each half of a head's features rotated against the other by the
// token's angle (the "rotate half" layout of Llama's Hugging Face port), base 10000.
at::Tensor apply_rotary(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const int64_t half = x.size(-1) / 2;
  const torch::Tensor first = x.narrow(-1, 0, half), second = x.narrow(-1, half, half);
  return x * cos + torch::cat({-second, first}, -1) * sin;
}

namespace {

class RmsNormImpl : public nn::Module {
 public:
  explicit RmsNormImpl(int64_t width) {
    weight = register_parameter("weight", torch::ones({width}));
  }
  torch::Tensor forward(const torch::Tensor& x) { return rms_norm(x, weight); }
  torch::Tensor weight;
};
TORCH_MODULE(RmsNorm);

class AttentionImpl : public nn::Module {
 public:
  AttentionImpl(int64_t width, int64_t heads, int64_t kv_heads, int64_t tokens)
      : heads_(heads), kv_heads_(kv_heads), head_width_(width / heads) {
    q = register_module("q_proj", nn::Linear(nn::LinearOptions(width, width).bias(false)));
    k = register_module("k_proj",
                        nn::Linear(nn::LinearOptions(width, kv_heads * head_width_).bias(false)));
    v = register_module("v_proj",
                        nn::Linear(nn::LinearOptions(width, kv_heads * head_width_).bias(false)));
    o = register_module("o_proj", nn::Linear(nn::LinearOptions(width, width).bias(false)));
    // Angles of every position, [tokens, head_width], as buffers: they move with the model.
    const auto frequencies = torch::pow(10000.0, -torch::arange(0, head_width_, 2, torch::kFloat) /
                                                     static_cast<double>(head_width_));
    const auto angles = torch::outer(torch::arange(tokens, torch::kFloat), frequencies);
    const auto both = torch::cat({angles, angles}, -1);
    cos_ = register_buffer("rope_cos", both.cos());
    sin_ = register_buffer("rope_sin", both.sin());
  }

  // Tensor parallelism: this rank keeps its share of the query heads and of the key/value
  // heads (so whole grouped-query groups), q, k and v column-parallel, o row-parallel.
  void split(std::shared_ptr<TensorRegion> region) {
    region_ = std::move(region);
    heads_ = region_->share_of(heads_, "the attention heads");
    kv_heads_ = region_->share_of(kv_heads_, "the key/value heads");
    const torch::NoGradGuard no_grad;
    for (auto* column : {&q, &k, &v}) {
      (*column)->weight.set_data(column_shard(*region_, (*column)->weight));
    }
    o->weight.set_data(row_shard(*region_, o->weight));
  }

  torch::Tensor forward(const torch::Tensor& x) {
    const std::vector<torch::Tensor> qkv =
        column_projections(region_.get(), x, {{q->weight, {}}, {k->weight, {}}, {v->weight, {}}});
    const int64_t batch = qkv[0].size(0), tokens = qkv[0].size(1);
    auto heads_of = [&](const torch::Tensor& t, int64_t count) {
      return t.view({batch, tokens, count, head_width_}).transpose(1, 2);
    };
    const torch::Tensor cos = cos_.narrow(0, 0, tokens), sin = sin_.narrow(0, 0, tokens);
    torch::Tensor queries = apply_rotary(heads_of(qkv[0], heads_), cos, sin);
    torch::Tensor keys = apply_rotary(heads_of(qkv[1], kv_heads_), cos, sin);
    torch::Tensor values = heads_of(qkv[2], kv_heads_);
    if (kv_heads_ < heads_) {  // grouped-query: each key/value head serves heads / kv_heads
      keys = keys.repeat_interleave(heads_ / kv_heads_, 1);
      values = values.repeat_interleave(heads_ / kv_heads_, 1);
    }
    // Causal: token t attends to tokens 0..t.
    const torch::Tensor context = recompute_core
                                      ? recomputed_attention_core(queries, keys, values, true)
                                      : attention_core(queries, keys, values, true);
    const torch::Tensor out =
        o->forward(context.transpose(1, 2).reshape({batch, tokens, heads_ * head_width_}));
    return region_ ? leave_tensor_region(*region_, out) : out;
  }

  nn::Linear q{nullptr}, k{nullptr}, v{nullptr}, o{nullptr};
  bool recompute_core = false;  // selective recomputation (runtime/models/attention_core.h)

 private:
  int64_t heads_, kv_heads_, head_width_;
  torch::Tensor cos_, sin_;
  std::shared_ptr<TensorRegion> region_;
};
TORCH_MODULE(Attention);

// SwiGLU: down(silu(gate(x)) * up(x)).
class FeedForwardImpl : public nn::Module {
 public:
  FeedForwardImpl(int64_t width, int64_t hidden) {
    gate = register_module("gate_proj", nn::Linear(nn::LinearOptions(width, hidden).bias(false)));
    up = register_module("up_proj", nn::Linear(nn::LinearOptions(width, hidden).bias(false)));
    down = register_module("down_proj", nn::Linear(nn::LinearOptions(hidden, width).bias(false)));
  }
  // Tensor parallelism: gate and up column-parallel, down row-parallel.
  void split(std::shared_ptr<TensorRegion> region) {
    region_ = std::move(region);
    const torch::NoGradGuard no_grad;
    gate->weight.set_data(column_shard(*region_, gate->weight));
    up->weight.set_data(column_shard(*region_, up->weight));
    down->weight.set_data(row_shard(*region_, down->weight));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    const std::vector<torch::Tensor> gate_up =
        column_projections(region_.get(), x, {{gate->weight, {}}, {up->weight, {}}});
    const torch::Tensor out = down->forward(torch::silu(gate_up[0]) * gate_up[1]);
    return region_ ? leave_tensor_region(*region_, out) : out;
  }
  nn::Linear gate{nullptr}, up{nullptr}, down{nullptr};

 private:
  std::shared_ptr<TensorRegion> region_;
};
TORCH_MODULE(FeedForward);

// One pre-norm decoder block; parameter names as Hugging Face's LlamaDecoderLayer.
class DecoderLayerImpl : public nn::Module {
 public:
  DecoderLayerImpl(int64_t width, int64_t heads, int64_t kv_heads, int64_t tokens) {
    input_norm = register_module("input_layernorm", RmsNorm(width));
    attention = register_module("self_attn", Attention(width, heads, kv_heads, tokens));
    attention_norm = register_module("post_attention_layernorm", RmsNorm(width));
    mlp = register_module("mlp", FeedForward(width, llama_feed_forward_width(width)));
  }
  // Tensor parallelism. With sequence parallelism the norms run on this rank's tokens (their
  // gradients partial), the model's first split layer shards the sequence and its last one
  // rejoins it.
  void split(const std::shared_ptr<TensorRegion>& region, bool first, bool last) {
    attention->split(region);
    mlp->split(region);
    region_ = region;
    if (!region->sequence_parallel) return;
    add_partial_parameter(*region, input_norm->weight);
    add_partial_parameter(*region, attention_norm->weight);
    shards_input_ = first;
    gathers_output_ = last;
  }
  torch::Tensor forward(torch::Tensor x) {
    if (shards_input_) x = split_sequence(*region_, x);
    x = x + attention->forward(input_norm->forward(x));
    x = x + mlp->forward(attention_norm->forward(x));
    return gathers_output_ ? gather_sequence(*region_, x) : x;
  }
  RmsNorm input_norm{nullptr}, attention_norm{nullptr};
  Attention attention{nullptr};
  FeedForward mlp{nullptr};

 private:
  std::shared_ptr<TensorRegion> region_;
  bool shards_input_ = false, gathers_output_ = false;
};
TORCH_MODULE(DecoderLayer);

// Vocabulary parallelism's token embedding: this rank's rows of the table looked up, the partial
// sums joined by Megatron's g (an all-reduce, or under sequence parallelism a reduce-scatter
// into this rank's tokens). The table stays registered where the model put it.
class VocabularyEmbeddingImpl : public nn::Module {
 public:
  VocabularyEmbeddingImpl(nn::Embedding table, std::shared_ptr<TensorRegion> region)
      : table_(register_module("table", std::move(table))), region_(std::move(region)) {}
  torch::Tensor forward(const torch::Tensor& ids) {
    return leave_tensor_region(*region_, vocabulary_lookup(*region_->group, ids, table_->weight));
  }

 private:
  nn::Embedding table_;
  std::shared_ptr<TensorRegion> region_;
};
TORCH_MODULE(VocabularyEmbedding);

// Vocabulary parallelism's head: column-parallel over the vocabulary, entered through Megatron's
// f (under sequence parallelism an all-gather of the tokens); its logits are this rank's
// vocabulary columns, which runtime::vocabulary_cross_entropy takes.
class VocabularyHeadImpl : public nn::Module {
 public:
  VocabularyHeadImpl(nn::Linear head, std::shared_ptr<TensorRegion> region)
      : head_(register_module("head", std::move(head))), region_(std::move(region)) {}
  torch::Tensor forward(const torch::Tensor& x) {
    return head_->forward(enter_tensor_region(*region_, x));
  }

 private:
  nn::Linear head_;
  std::shared_ptr<TensorRegion> region_;
};
TORCH_MODULE(VocabularyHead);

class Llama : public ZooModel {
 public:
  explicit Llama(const ModelOptions& options) {
    const int64_t depth = options.depth > 0 ? options.depth : kLlamaDefaultDepth;
    const int64_t width = options.width > 0 ? options.width : kLlamaDefaultWidth;
    const DecoderShape& decoder = options.decoder;
    const int64_t heads = decoder.heads > 0 ? decoder.heads : width / kLlamaHeadWidth;
    const int64_t kv_heads = decoder.kv_heads > 0 ? decoder.kv_heads : heads;
    const int64_t tokens = options.input_shape.at(0);
    input_vocabulary_ = decoder.vocab > 0 ? decoder.vocab : kLlamaVocabulary;
    tensor_region_ = make_tensor_region(options.tensor_shard, options.tensor_shards,
                                        options.sequence_parallel, options.recompute_gather);
    const bool vocabulary = tensor_region_ && options.vocabulary_parallel;
    embed_tokens_ = register_module("embed_tokens", nn::Embedding(input_vocabulary_, width));
    if (vocabulary) {
      append_layer("embed_tokens", "Embedding", VocabularyEmbedding(embed_tokens_, tensor_region_));
    } else {
      append_layer("embed_tokens", "Embedding", embed_tokens_);
    }
    auto layers = register_module("layers", nn::ModuleList());
    for (int64_t i = 0; i < depth; ++i) {
      DecoderLayer layer(width, heads, kv_heads, tokens);
      layer->attention->recompute_core = options.selective_recomputation;
      decoders_.push_back(layer);
      layers->push_back(layer);
      append_layer("layers." + std::to_string(i), "DecoderLayer", layer, /*recomputable=*/true);
    }
    norm_ = register_module("norm", RmsNorm(width));
    append_layer("norm", "RMSNorm", norm_);
    lm_head_ = register_module("lm_head",
                               nn::Linear(nn::LinearOptions(width, input_vocabulary_).bias(false)));
    if (vocabulary) {
      append_layer("lm_head", "Linear", VocabularyHead(lm_head_, tensor_region_));
    } else {
      append_layer("lm_head", "Linear", lm_head_);
    }
    initialise();
    if (tensor_region_) split(vocabulary);
  }

 private:
  // Llama's initialisation: N(0, 0.02) for every projection and the embeddings.
  void initialise() {
    for (const auto& module : modules(/*include_self=*/false)) {
      if (auto* linear = module->as<nn::Linear>()) nn::init::normal_(linear->weight, 0, 0.02);
      if (auto* embedding = module->as<nn::Embedding>()) {
        nn::init::normal_(embedding->weight, 0, 0.02);
      }
    }
  }

  // Split after the whole model is drawn: every rank's shard is its part of one model. With the
  // vocabulary split too, the embedding shards the tokens and the head gathers them (under
  // sequence parallelism), so the final norm runs on this rank's tokens.
  void split(bool vocabulary) {
    const size_t last = decoders_.size() - 1;
    for (size_t i = 0; i < decoders_.size(); ++i) {
      decoders_[i]->split(tensor_region_, i == 0 && !vocabulary, i == last && !vocabulary);
    }
    if (!vocabulary) return;
    const torch::NoGradGuard no_grad;
    embed_tokens_->weight.set_data(column_shard(*tensor_region_, embed_tokens_->weight));
    lm_head_->weight.set_data(column_shard(*tensor_region_, lm_head_->weight));
    if (tensor_region_->sequence_parallel) add_partial_parameter(*tensor_region_, norm_->weight);
  }

  nn::Embedding embed_tokens_{nullptr};
  std::vector<DecoderLayer> decoders_;
  RmsNorm norm_{nullptr};
  nn::Linear lm_head_{nullptr};
};

}  // namespace

std::shared_ptr<ZooModel> make_llama(const ModelOptions& options) {
  return std::make_shared<Llama>(options);
}

}  // namespace runtime
