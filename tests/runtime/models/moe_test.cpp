// The mixture-of-experts feed-forward (issue 22) against hand computation: routing to the
// top-k experts, GShard's renormalised pair and Switch's raw probability as gates, capacity
// claimed by first choices in token order with the rest dropped, and the load-balancing loss;
// and the bert_moe model that puts it in every other encoder layer.
#include "runtime/models/moe.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "runtime/models/model_zoo.h"

namespace runtime {
namespace {

// What expert e makes of token row x: Linear, GELU, Linear, as the layer runs it.
torch::Tensor expert_of(MoeFeedForward& layer, int64_t e, const torch::Tensor& x) {
  return layer->experts[e]->as<torch::nn::Sequential>()->forward(x);
}

// A router that sends each token where its hidden values say: hidden 2, experts 2, router
// weight = identity, so logits are the token itself.
MoeFeedForward routed_layer(MoeOptions options) {
  MoeFeedForward layer(2, options);
  torch::NoGradGuard no_grad;
  layer->router->weight.copy_(torch::eye(2));
  return layer;
}

TEST(MixtureOfExperts, SwitchTop1CapacityDropsLaterTokens) {
  // 3 tokens, 2 experts, top-1, capacity factor 2/3: ceil(2/3 x 3 x 1 / 2) = 1 token each.
  MoeFeedForward layer = routed_layer({.experts = 2, .top_k = 1, .capacity_factor = 2.0 / 3});
  const torch::Tensor x = torch::tensor({{2.0f, 0.0f}, {1.0f, 0.0f}, {0.0f, 3.0f}});
  EXPECT_EQ(layer->capacity(3), 1);
  const torch::Tensor y = layer->forward(x);
  // Tokens 0 and 1 choose expert 0 (logit 2 or 1 against 0); token 1 comes second: dropped.
  // Token 2 chooses expert 1. Switch gates: the router's probability of the chosen expert.
  const torch::Tensor p = torch::softmax(x, -1);
  EXPECT_TRUE(torch::allclose(y[0], p[0][0] * expert_of(layer, 0, x.slice(0, 0, 1))[0]));
  EXPECT_TRUE(torch::equal(y[1], torch::zeros({2})));
  EXPECT_TRUE(torch::allclose(y[2], p[2][1] * expert_of(layer, 1, x.slice(0, 2, 3))[0]));
  EXPECT_EQ(layer->dropped_choices(), 1);
  // Load balance: first choices 2 of 3 to expert 0, 1 to expert 1; mean probabilities P.
  const torch::Tensor mean = p.mean(0);
  const double expected =
      2.0 * ((2.0 / 3) * mean[0].item<double>() + (1.0 / 3) * mean[1].item<double>());
  EXPECT_NEAR(layer->auxiliary_loss().item<double>(), expected, 1e-6);
}

TEST(MixtureOfExperts, GShardTop2RenormalisesThePairAndFirstChoicesClaimCapacityFirst) {
  // 2 tokens, 2 experts, top-2, capacity ceil(0.5 x 2 x 2 / 2) = 1: each expert takes one.
  MoeFeedForward layer = routed_layer({.experts = 2, .top_k = 2, .capacity_factor = 0.5});
  const torch::Tensor x = torch::tensor({{1.0f, 0.0f}, {0.0f, 2.0f}});
  const torch::Tensor y = layer->forward(x);
  // First choices: token 0 -> expert 0, token 1 -> expert 1; both second choices find their
  // expert full and are dropped. The pair renormalised: gate = p_first / (p_0 + p_1) = p_first.
  const torch::Tensor p = torch::softmax(x, -1);
  EXPECT_EQ(layer->dropped_choices(), 2);
  EXPECT_TRUE(torch::allclose(y[0], p[0][0] * expert_of(layer, 0, x.slice(0, 0, 1))[0]));
  EXPECT_TRUE(torch::allclose(y[1], p[1][1] * expert_of(layer, 1, x.slice(0, 1, 2))[0]));
  // With room for everything (capacity 2 each), each token gets both experts, p-weighted.
  MoeFeedForward roomy = routed_layer({.experts = 2, .top_k = 2, .capacity_factor = 1.0});
  {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < layer->parameters().size(); ++i) {
      roomy->parameters()[i].copy_(layer->parameters()[i]);
    }
  }
  const torch::Tensor both = roomy->forward(x);
  EXPECT_EQ(roomy->dropped_choices(), 0);
  for (int64_t t = 0; t < 2; ++t) {
    const torch::Tensor row = x.slice(0, t, t + 1);
    const torch::Tensor expected =
        p[t][0] * expert_of(roomy, 0, row)[0] + p[t][1] * expert_of(roomy, 1, row)[0];
    EXPECT_TRUE(torch::allclose(both[t], expected, 1e-5, 1e-6)) << t;
  }
}

TEST(MixtureOfExperts, GradientsReachTheRouterAndTheExperts) {
  MoeFeedForward layer(8, MoeOptions{.experts = 4, .top_k = 2, .capacity_factor = 1.25});
  const torch::Tensor x = torch::randn({3, 5, 8});
  const torch::Tensor output = layer->forward(x);
  (output.pow(2).sum() + layer->auxiliary_loss()).backward();
  EXPECT_TRUE(layer->router->weight.grad().defined());
  EXPECT_GT(layer->router->weight.grad().abs().sum().item<double>(), 0.0);
}

TEST(MixtureOfExperts, BertMoeHasAMixtureInEveryOtherLayer) {
  torch::manual_seed(0);
  const ModelOptions options{{16}, 2, 4, 128};
  const auto dense = make_model("bert", options);
  const auto moe = make_model("bert_moe", options);
  // Layers 1 and 3 of 4 trade their 128 -> 512 -> 128 feed-forward for a router (128 x 4)
  // and 4 such experts: + 2 x (3 x (128 x 512 + 512 + 512 x 128 + 128) + 128 x 4).
  const int64_t feed_forward = 128 * 512 + 512 + 512 * 128 + 128;
  EXPECT_EQ(parameter_count(*moe) - parameter_count(*dense), 2 * (3 * feed_forward + 128 * 4));
  const torch::Tensor ids = torch::randint(30522, {2, 16}, torch::kLong);
  EXPECT_EQ(moe->forward(ids).sizes(), (std::vector<int64_t>{2, 2}));
  ASSERT_TRUE(moe->auxiliary_loss().defined());
  EXPECT_GT(moe->auxiliary_loss().item<double>(), 0.0);
  EXPECT_FALSE(dense->auxiliary_loss().defined());
}

TEST(MixtureOfExperts, TheRankProgramsMoeFlagRoundTripsAndNamesBadText) {
  const MoeShape shape{.experts = 8, .top_k = 1, .capacity_factor = 1.5, .every = 3};
  EXPECT_EQ(moe_flag_text(shape), "8,1,1.5,3");
  EXPECT_EQ(parse_moe_flag("8,1,1.5,3"), shape);
  EXPECT_EQ(parse_moe_flag(moe_flag_text(MoeShape{})), MoeShape{});
  for (const char* bad : {"8,1,1.5", "8;1;1.5;3", "8,1,1.5,3,9", "eight,1,1.5,3", ""}) {
    try {
      parse_moe_flag(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), std::string("--moe '") + bad +
                                           "': expected EXPERTS,TOP_K,CAPACITY_FACTOR,EVERY "
                                           "(e.g. 4,2,1.25,2)");
    }
  }
}

}  // namespace
}  // namespace runtime
