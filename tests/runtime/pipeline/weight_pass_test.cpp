// The zero-bubble W without the input path: on a block of two linear layers around a ReLU and
// a norm's scale, the weight nodes found after forward, their gradients captured while I runs,
// then run alone, give the weights exactly the gradients of one whole backward -- and compute
// nothing of the input's (its gradient stays what I made). Not armed during I, the pass says so
// and does nothing.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "runtime/pipeline/weight_pass.h"

namespace {

struct Block {
  torch::nn::Linear first{torch::nn::LinearOptions(6, 8)};
  torch::nn::Linear second{torch::nn::LinearOptions(8, 6)};
  torch::Tensor scale = torch::rand({6}).requires_grad_(true);
  std::vector<torch::Tensor> weights() const {
    auto all = first->parameters();
    for (const auto& p : second->parameters()) all.push_back(p);
    all.push_back(scale);
    return all;
  }
  torch::Tensor operator()(const torch::Tensor& x) {
    return second->forward(torch::relu(first->forward(x))) * scale +
           x;  // a residual, as a block has
  }
};

std::vector<torch::Tensor> gradients_of(const std::vector<torch::Tensor>& weights) {
  std::vector<torch::Tensor> grads;
  for (const auto& w : weights) grads.push_back(w.grad().clone());
  return grads;
}

TEST(WeightPass, RunsTheWeightNodesAloneAndMatchesOneBackward) {
  torch::manual_seed(3);
  Block block;
  const torch::Tensor x = torch::randn({5, 6});
  const torch::Tensor seed = torch::randn({5, 6});
  // Reference: one backward of everything.
  torch::Tensor input = x.clone().requires_grad_(true);
  block(input).backward(seed);
  const auto expected = gradients_of(block.weights());
  const torch::Tensor expected_input = input.grad().clone();
  for (auto& w : block.weights()) w.mutable_grad() = torch::Tensor();

  input = x.clone().requires_grad_(true);
  const torch::Tensor out = block(input);
  runtime::WeightPass pass(out, input, block.weights());
  pass.arm(true);
  const torch::Tensor input_gradient =
      torch::autograd::grad({out}, {input}, {seed}, /*retain_graph=*/true)[0];
  pass.arm(false);
  for (const auto& w : block.weights()) EXPECT_FALSE(w.grad().defined()) << "I touched a weight";
  ASSERT_TRUE(pass.run());
  EXPECT_TRUE(torch::allclose(input_gradient, expected_input));
  EXPECT_FALSE(input.grad().defined()) << "W went down the input path";
  const auto got = gradients_of(block.weights());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(torch::allclose(got[i], expected[i], 1e-6, 1e-7)) << "weight " << i;
  }
}

TEST(WeightPass, NotArmedWhileIRanItDoesNothing) {
  Block block;
  const torch::Tensor input = torch::randn({5, 6}).requires_grad_(true);
  const torch::Tensor out = block(input);
  runtime::WeightPass pass(out, input, block.weights());
  torch::autograd::grad({out}, {input}, {torch::ones_like(out)}, /*retain_graph=*/true);
  EXPECT_FALSE(pass.run());
  for (const auto& w : block.weights()) EXPECT_FALSE(w.grad().defined());
}

}  // namespace
