#include "planner/spmd/transformer_graph.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "planner/spmd/signatures.h"

namespace harness::spmd {
namespace {

class GraphBuilder {
 public:
  GraphBuilder(const TransformerShape& shape, int ranks) : shape_(shape), ranks_(ranks) {
    graph_.ranks = ranks;
  }

  int add(Operator op) {
    graph_.operators.push_back(std::move(op));
    return static_cast<int>(graph_.operators.size()) - 1;
  }
  double tokens() const { return static_cast<double>(shape_.batch * shape_.tokens); }
  double activation_bytes(int64_t features) const {
    return tokens() * static_cast<double>(features) * shape_.bytes_per_element;
  }
  // BERT's and ViT's linear layers have biases, the decoder's (Llama's) none.
  bool biased() const { return shape_.family != TransformerFamily::kDecoder; }
  double weight_bytes(int64_t in, int64_t out) const {
    const int64_t bias = biased() ? out : 0;
    return static_cast<double>(in * out + bias) * shape_.bytes_per_element;
  }
  bool divides(int64_t size) const { return size % ranks_ == 0; }
  Divisible divisible(int64_t features) const {
    return {divides(shape_.batch), divides(shape_.tokens), divides(features)};
  }
  Operator linear(const std::string& name, int input, int64_t in, int64_t out, bool column,
                  bool row) const {
    return dense(name, input, tokens(), in, out, divisible(out), column, row);
  }
  // A linear layer over `rows` of its input (the encoder's head reads one token a sequence);
  // one over ViT's patches hands no gradient back.
  Operator dense(const std::string& name, int input, double rows, int64_t in, int64_t out,
                 const Divisible& divisible, bool column, bool row,
                 bool input_has_gradient = true) const {
    const OperatorShape shape{1, input_has_gradient, weight_bytes(in, out)};
    return {name,
            OperatorKind::kLinear,
            {input},
            2.0 * rows * static_cast<double>(in * out),
            shape.parameter_bytes,
            rows * static_cast<double>(out) * shape_.bytes_per_element,
            linear_signatures(shape, ranks_, divisible, column, row)};
  }
  Operator elementwise(const std::string& name, OperatorKind kind, int input, int64_t features,
                       double flops_per_element) const {
    return {name,
            kind,
            {input},
            flops_per_element * tokens() * static_cast<double>(features),
            0,
            activation_bytes(features),
            elementwise_signatures({1, true, 0}, ranks_, divisible(features))};
  }
  Operator norm(const std::string& name, int input) const {
    const int64_t w = shape_.width;
    // LayerNorm's weight and bias; RMSNorm's weight.
    const int64_t vectors = biased() ? 2 : 1;
    const OperatorShape shape{1, true, static_cast<double>(vectors * w) * shape_.bytes_per_element};
    return {name,
            OperatorKind::kNorm,
            {input},
            5.0 * tokens() * static_cast<double>(w),
            shape.parameter_bytes,
            activation_bytes(w),
            norm_signatures(shape, ranks_, divisible(w))};
  }
  Operator residual(const std::string& name, int stream, int branch) const {
    const int64_t w = shape_.width;
    return {name,
            OperatorKind::kAdd,
            {stream, branch},
            tokens() * static_cast<double>(w),
            0,
            activation_bytes(w),
            residual_signatures(ranks_, divisible(w))};
  }

  const TransformerShape& shape_;
  const int ranks_;
  OperatorGraph graph_;
};

int add_attention(GraphBuilder& g, const std::string& block, int input) {
  const TransformerShape& s = g.shape_;
  const int64_t head_width = s.width / s.heads;
  const int64_t qkv_width = (s.heads + 2 * s.kv_heads) * head_width;
  const bool heads_divide = g.divides(s.heads) && g.divides(s.kv_heads);
  const int qkv = g.add(g.linear(block + ".qkv", input, s.width, qkv_width, heads_divide, false));
  Operator core{block + ".attention",
                OperatorKind::kAttention,
                {qkv},
                4.0 * g.tokens() * static_cast<double>(s.tokens * s.width),
                0,
                g.activation_bytes(s.width),
                attention_signatures(g.ranks_, {g.divides(s.batch), false, heads_divide})};
  const int attention = g.add(std::move(core));
  return g.add(g.linear(block + ".output", attention, s.width, s.width, false, heads_divide));
}

int add_feed_forward(GraphBuilder& g, const std::string& block, int input) {
  const TransformerShape& s = g.shape_;
  const bool decoder = s.family == TransformerFamily::kDecoder;
  const bool split = g.divides(s.feed_forward);
  const int64_t up_width = decoder ? 2 * s.feed_forward : s.feed_forward;
  const int up = g.add(
      g.linear(block + (decoder ? ".gate_up" : ".fc1"), input, s.width, up_width, split, false));
  Operator activation = g.elementwise(block + (decoder ? ".swiglu" : ".gelu"),
                                      OperatorKind::kActivation, up, s.feed_forward, 8.0);
  const int act = g.add(std::move(activation));
  return g.add(
      g.linear(block + (decoder ? ".down" : ".fc2"), act, s.feed_forward, s.width, false, split));
}

int add_mixture(GraphBuilder& g, const std::string& block, int input) {
  const TransformerShape& s = g.shape_;
  const double w = static_cast<double>(s.width), hidden = 4.0 * w;
  const double routed = s.capacity_factor * static_cast<double>(s.top_k);
  MixtureShape shape;
  // The router has no bias (runtime/models/moe.h).
  shape.router_bytes = w * static_cast<double>(s.experts) * s.bytes_per_element;
  shape.operator_shape = {1, true,
                          shape.router_bytes + static_cast<double>(s.experts) *
                                                   (2.0 * w * hidden + hidden + w) *
                                                   s.bytes_per_element};
  shape.dispatch_bytes = g.activation_bytes(s.width) * routed / g.ranks_;
  shape.experts_divide = g.divides(s.experts);
  shape.hidden_divides = g.divides(4 * s.width);
  const double flops = g.tokens() * (routed * 4.0 * w * hidden + 2.0 * w * s.experts);
  return g.add({block + ".experts",
                OperatorKind::kExperts,
                {input},
                flops,
                shape.operator_shape.parameter_bytes,
                g.activation_bytes(s.width),
                mixture_signatures(shape, g.ranks_, g.divisible(s.width))});
}

}  // namespace

namespace {

int add_embedding(GraphBuilder& g) {
  const TransformerShape& s = g.shape_;
  const bool encoder = s.family == TransformerFamily::kEncoder;
  const double id_bytes = g.tokens() * 8.0;  // int64 token ids
  const int ids = g.add({"tokens",
                         OperatorKind::kTokens,
                         {},
                         0,
                         0,
                         id_bytes,
                         token_source_signatures(g.ranks_, g.divisible(1))});
  // The encoder's embeddings add positions (their rows after the words': a vocabulary split
  // divides both), then a LayerNorm of their own: an operator apart, since a norm cannot run on
  // partial sums.
  const double rows = static_cast<double>(s.vocabulary + (encoder ? s.tokens : 0));
  const OperatorShape shape{1, false, rows * static_cast<double>(s.width) * s.bytes_per_element};
  const int looked_up =
      g.add({encoder ? "embeddings" : "embed_tokens",
             OperatorKind::kEmbedding,
             {ids},
             g.tokens() * static_cast<double>(s.width),
             shape.parameter_bytes,
             g.activation_bytes(s.width),
             embedding_signatures(shape, g.ranks_, g.divisible(s.width),
                                  g.divides(s.vocabulary + (encoder ? s.tokens : 0)))});
  return encoder ? g.add(g.norm("embeddings_norm", looked_up)) : looked_up;
}

// ViT's patches (no gradient), their projection, then the class token in front and positions
// added: an operator of its own, which changes the token count, so neither runs on a token shard.
int add_patch_embedding(GraphBuilder& g) {
  const TransformerShape& s = g.shape_;
  const double patches = static_cast<double>(s.batch * (s.tokens - 1));
  const Divisible no_token_shard{g.divides(s.batch), false, g.divides(s.width)};
  const int source = g.add({"patches",
                            OperatorKind::kTokens,
                            {},
                            0,
                            0,
                            patches * static_cast<double>(s.patch_pixels) * s.bytes_per_element,
                            token_source_signatures(g.ranks_, {g.divides(s.batch), false, false})});
  const int projected =
      g.add(g.dense("embeddings.projection", source, patches, s.patch_pixels, s.width,
                    no_token_shard, no_token_shard.features, false, /*input_has_gradient=*/false));
  const OperatorShape shape{1, true,
                            static_cast<double>((s.tokens + 1) * s.width) * s.bytes_per_element};
  return g.add({"embeddings",
                OperatorKind::kEmbedding,
                {projected},
                g.tokens() * static_cast<double>(s.width),
                shape.parameter_bytes,
                g.activation_bytes(s.width),
                elementwise_signatures(shape, g.ranks_, no_token_shard)});
}

// Llama's and ViT's block: each branch normalises its input (the second norm `ffn_norm` or, as
// the zoo names ViT's, `output_norm`).
int add_pre_norm_block(GraphBuilder& g, const std::string& block, int x, bool mixture) {
  const bool vision = g.shape_.family == TransformerFamily::kVision;
  const int attention = add_attention(g, block, g.add(g.norm(block + ".attention_norm", x)));
  const int mid = g.add(g.residual(block + ".attention_add", x, attention));
  const int normed = g.add(g.norm(block + (vision ? ".output_norm" : ".ffn_norm"), mid));
  const int ffn = mixture ? add_mixture(g, block, normed) : add_feed_forward(g, block, normed);
  return g.add(g.residual(block + ".ffn_add", mid, ffn));
}

int add_encoder_block(GraphBuilder& g, const std::string& block, int x, bool mixture) {
  const int attention = add_attention(g, block, x);
  const int joined = g.add(g.residual(block + ".attention_add", x, attention));
  const int mid = g.add(g.norm(block + ".attention_norm", joined));
  const int ffn = mixture ? add_mixture(g, block, mid) : add_feed_forward(g, block, mid);
  const int out = g.add(g.residual(block + ".ffn_add", mid, ffn));
  return g.add(g.norm(block + ".output_norm", out));
}

void add_decoder_head(GraphBuilder& g, int x) {
  const TransformerShape& s = g.shape_;
  const int normed = g.add(g.norm("norm", x));
  const int logits = g.add(g.linear("lm_head", normed, s.width, s.vocabulary,
                                    g.divides(s.vocabulary), g.divides(s.width)));
  g.add({"loss",
         OperatorKind::kLoss,
         {logits},
         3.0 * g.tokens() * static_cast<double>(s.vocabulary),
         0,
         s.bytes_per_element,
         loss_signatures(g.ranks_, g.divisible(s.vocabulary), g.tokens() * s.bytes_per_element)});
}

// The loss of a classifier's logits, one row a sample.
void add_class_loss(GraphBuilder& g, int logits) {
  const TransformerShape& s = g.shape_;
  const double rows = static_cast<double>(s.batch);
  const bool batch = g.divides(s.batch), classes = g.divides(s.classes);
  g.add({"loss",
         OperatorKind::kLoss,
         {logits},
         3.0 * rows * static_cast<double>(s.classes),
         0,
         s.bytes_per_element,
         loss_signatures(g.ranks_, {batch, false, classes}, rows * s.bytes_per_element)});
}

// ViT's head: the norm over every token, then the classifier of the class token.
void add_vision_head(GraphBuilder& g, int x) {
  const TransformerShape& s = g.shape_;
  const bool batch = g.divides(s.batch), width = g.divides(s.width);
  const bool classes = g.divides(s.classes);
  const int normed = g.add(g.norm("head.norm", x));
  add_class_loss(g, g.add(g.dense("head.classifier", normed, static_cast<double>(s.batch), s.width,
                                  s.classes, {batch, false, classes}, classes, width)));
}

void add_encoder_head(GraphBuilder& g, int x) {
  const TransformerShape& s = g.shape_;
  const double rows = static_cast<double>(s.batch);
  const bool batch = g.divides(s.batch), width = g.divides(s.width);
  // The pooler: the first token's dense layer, then its tanh (apart: no tanh of partial sums).
  const int pooled =
      g.add(g.dense("pooler", x, rows, s.width, s.width, {batch, false, width}, width, width));
  Operator tanh{"pooler_tanh",
                OperatorKind::kActivation,
                {pooled},
                8.0 * rows * static_cast<double>(s.width),
                0,
                rows * static_cast<double>(s.width) * s.bytes_per_element,
                elementwise_signatures({1, true, 0}, g.ranks_, {batch, false, width})};
  const int activated = g.add(std::move(tanh));
  const bool classes = g.divides(s.classes);
  add_class_loss(g, g.add(g.dense("classifier", activated, rows, s.width, s.classes,
                                  {batch, false, classes}, classes, width)));
}

void check_shape(const TransformerShape& s, int ranks) {
  const int64_t sizes[] = {s.batch,   s.tokens,   s.width,        s.depth,
                           s.heads,   s.kv_heads, s.feed_forward, s.vocabulary,
                           s.classes, s.top_k,    s.moe_every,    s.patch_pixels};
  for (int64_t size : sizes) {
    if (size < 1) throw std::invalid_argument("a transformer's sizes must be positive");
  }
  if (ranks < 1 || s.width % s.heads != 0 || s.heads % s.kv_heads != 0 || s.experts < 0 ||
      !(s.capacity_factor > 0)) {
    throw std::invalid_argument(
        "a transformer's heads must divide its width, key/value heads "
        "its heads; capacity and ranks positive");
  }
}

}  // namespace

OperatorGraph transformer_graph(const TransformerShape& shape, int ranks) {
  check_shape(shape, ranks);
  GraphBuilder g(shape, ranks);
  const TransformerFamily family = shape.family;
  const bool decoder = family == TransformerFamily::kDecoder;
  int x = family == TransformerFamily::kVision ? add_patch_embedding(g) : add_embedding(g);
  for (int64_t i = 0; i < shape.depth; ++i) {
    const std::string block = (decoder ? "layers." : "encoder.layer.") + std::to_string(i);
    const bool mixture = shape.experts > 0 && (i + 1) % shape.moe_every == 0;
    x = family == TransformerFamily::kEncoder ? add_encoder_block(g, block, x, mixture)
                                              : add_pre_norm_block(g, block, x, mixture);
  }
  if (decoder) {
    add_decoder_head(g, x);
  } else if (family == TransformerFamily::kVision) {
    add_vision_head(g, x);
    g.graph_.megatron_runs = false;
  } else {
    add_encoder_head(g, x);
  }
  return g.graph_;
}

}  // namespace harness::spmd
