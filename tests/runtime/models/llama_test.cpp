// The Llama-style decoder: its parameters are the architecture's (counted by hand from its
// shapes, grouped-query heads included), it is causal (no logit sees a later token), it trains
// on next-token targets, and its names follow Hugging Face's Llama.
#include "runtime/models/llama.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "runtime/models/flop_count.h"
#include "runtime/models/synthetic_batch.h"

namespace {

using runtime::ModelOptions;

ModelOptions small(int64_t tokens = 8, int64_t depth = 2, int64_t width = 128,
                   runtime::DecoderShape decoder = {}) {
  ModelOptions options;
  options.input_shape = {tokens};
  options.depth = depth;
  options.width = width;
  options.decoder = decoder;
  return options;
}

// Embeddings and head V x W; per block: q and o W x W, k and v W x (kv_heads x head width), the
// SwiGLU's three W x F, two RMSNorm scales; a last RMSNorm.
int64_t expected_parameters(int64_t depth, int64_t width, int64_t kv_heads, int64_t head_width = 64,
                            int64_t vocabulary = runtime::kLlamaVocabulary) {
  const int64_t kv_width = kv_heads * head_width;
  const int64_t hidden = runtime::llama_feed_forward_width(width);
  const int64_t block = 2 * width * width + 2 * width * kv_width + 3 * width * hidden + 2 * width;
  return 2 * vocabulary * width + depth * block + width;
}

TEST(Llama, ParametersAreTheArchitecturesWithGroupedQueryHeads) {
  EXPECT_EQ(runtime::llama_feed_forward_width(512), 1536);  // Llama's rule: 2/3 of 4 x 512, to 256
  EXPECT_EQ(runtime::llama_feed_forward_width(4096), 11008);         // Llama-7B's
  const auto full = runtime::make_model("llama", small(8, 2, 256));  // 4 heads, 4 key/value heads
  EXPECT_EQ(runtime::parameter_count(*full), expected_parameters(2, 256, 4));
  const auto grouped =
      runtime::make_model("llama", small(8, 2, 256, {0, 2, 0}));  // kv_heads 2 of 4
  EXPECT_EQ(runtime::parameter_count(*grouped), expected_parameters(2, 256, 2));
  EXPECT_LT(runtime::parameter_count(*grouped), runtime::parameter_count(*full));
  // 8 heads of 32 of which 2 key/value heads, over a vocabulary of 1000.
  const auto own = runtime::make_model("llama", small(8, 2, 256, {8, 2, 1000}));
  EXPECT_EQ(runtime::parameter_count(*own), expected_parameters(2, 256, 2, 32, 1000));
  EXPECT_EQ(own->input_vocabulary(), 1000);
  // The zoo's rule refuses what the shapes cannot be, a width below a head's among them.
  for (const runtime::DecoderShape bad :
       {runtime::DecoderShape{0, 3, 0}, runtime::DecoderShape{3, 0, 0},
        runtime::DecoderShape{256, 0, 0}, runtime::DecoderShape{0, 0, 1}}) {
    EXPECT_THROW(runtime::make_model("llama", small(8, 2, 256, bad)), std::invalid_argument);
  }
  EXPECT_THROW(runtime::make_model("llama", small(8, 2, 32)), std::invalid_argument);
  EXPECT_THROW(runtime::make_model("mlp", {{8}, 2, 0, 0, {}, {0, 0, 1000}}),
               std::invalid_argument);  // heads, kv_heads and vocab are llama's
  // The zoo builds it by name, a chain of named layers as every zoo model.
  const auto zoo = runtime::make_model("llama", small(8, 3, 128));
  std::vector<std::string> names;
  for (const auto& layer : zoo->layers()) names.push_back(layer.name);
  EXPECT_EQ(names, (std::vector<std::string>{"embed_tokens", "layers.0", "layers.1", "layers.2",
                                             "norm", "lm_head"}));
  const auto parameters = zoo->named_parameters();
  EXPECT_TRUE(parameters.contains("layers.1.self_attn.q_proj.weight"));
  EXPECT_TRUE(parameters.contains("layers.2.mlp.gate_proj.weight"));
  EXPECT_TRUE(parameters.contains("layers.0.post_attention_layernorm.weight"));
}

// Token t's logits depend on tokens 0..t only: changing the last tokens leaves the others'.
TEST(Llama, NoLogitSeesALaterToken) {
  torch::manual_seed(3);
  const auto model =
      runtime::make_model("llama", small(8, 2, 128, {0, 1, 0}));  // one key/value head
  model->eval();
  torch::NoGradGuard no_grad;
  const torch::Tensor ids = torch::randint(runtime::kLlamaVocabulary, {2, 8}, torch::kLong);
  torch::Tensor changed = ids.clone();
  changed.narrow(1, 5, 3).fill_(7);
  const torch::Tensor before = model->forward(ids), after = model->forward(changed);
  ASSERT_EQ(before.sizes(), (std::vector<int64_t>{2, 8, runtime::kLlamaVocabulary}));
  EXPECT_TRUE(torch::allclose(before.narrow(1, 0, 5), after.narrow(1, 0, 5), 0, 0));
  EXPECT_FALSE(torch::allclose(before.narrow(1, 5, 1), after.narrow(1, 5, 1)));
  // Rotary embeddings make the order matter: the same tokens in another order give other
  // logits at the last position.
  const torch::Tensor reversed = model->forward(ids.flip({1}).contiguous());
  EXPECT_FALSE(torch::allclose(before.select(1, 7), reversed.select(1, 0)));
}

// Cross-entropy targets are the next tokens; the loss is the mean over every token's.
TEST(Llama, TrainsOnTheNextToken) {
  torch::manual_seed(5);
  const ModelOptions options = small(6, 1, 64);
  const auto model = runtime::make_model("llama", options);
  const auto batch = runtime::make_synthetic_batch(*model, options, 3, "cross_entropy");
  ASSERT_EQ(batch.target.sizes(), (std::vector<int64_t>{3, 6}));
  EXPECT_TRUE(torch::equal(batch.target.narrow(1, 0, 5), batch.input.narrow(1, 1, 5)));
  const torch::Tensor logits = model->forward(batch.input);
  const torch::Tensor loss = runtime::training_loss("cross_entropy", logits, batch.target);
  const torch::Tensor by_hand =
      -torch::log_softmax(logits, -1).gather(-1, batch.target.unsqueeze(-1)).mean();
  EXPECT_NEAR(loss.item<double>(), by_hand.item<double>(), 1e-5);
  // At initialisation every token is about equally likely: the loss is near log(vocabulary).
  EXPECT_NEAR(loss.item<double>(), std::log(double(runtime::kLlamaVocabulary)), 0.5);
  // One AdamW-sized step against the gradient lowers it.
  loss.backward();
  {
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters()) p -= 1e-2 * p.grad().sign();
  }
  EXPECT_LT(runtime::training_loss("cross_entropy", model->forward(batch.input), batch.target)
                .item<double>(),
            loss.item<double>());
}

// FLOPs per token as PaLM's appendix and torchtitan count a decoder's training step: 6 x its
// parameters outside the embeddings + 12 x layers x heads x head width x tokens (attention's
// two products, forward and backward). The ranks count 3 x the forward's matrix products
// (runtime/models/flop_count.h): the same number but for the RMSNorm scales, which the formula
// counts as parameters and no product multiplies. So MFU here is MFU there.
TEST(Llama, FlopsPerTokenArePaLMsFormula) {
  const int64_t tokens = 16, layers = 2, width = 128, heads = 4, vocabulary = 1000;
  const ModelOptions options = small(tokens, layers, width, {heads, 2, vocabulary});
  const auto model = runtime::make_model("llama", options);
  const torch::Tensor input = torch::randint(vocabulary, {1, tokens}, torch::kLong);
  double forward = 0;
  for (const double f : runtime::layer_forward_flops(*model, input)) forward += f;
  const double counted_per_token = 3 * forward / tokens;
  const double norms = double((2 * layers + 1) * width);
  const double outside_embeddings =
      double(runtime::parameter_count(*model)) - double(vocabulary * width);
  const double attention = 12.0 * layers * heads * (width / heads) * tokens;
  EXPECT_DOUBLE_EQ(counted_per_token, 6 * (outside_embeddings - norms) + attention);
  const double palm = 6 * outside_embeddings + attention;
  EXPECT_NEAR(counted_per_token / palm, 1.0, 2e-3);  // the scales: 0.1% at this size
}

}  // namespace
