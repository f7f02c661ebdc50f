// A layer's backward as the profiler times it: the parameters' gradients accumulate as in
// training, the input's gradient is the pass's own.
#include "runtime/profile/layer_backward.h"

#include <gtest/gtest.h>

namespace {

// y = x W^T + b with W = [[1, 2], [3, 4]], b = [0, 0], x = [[1, 1]], dL/dy = [[1, 1]]:
// dW = g^T x = [[1, 1], [1, 1]], db = [1, 1], dx = g W = [4, 6].
struct TinyLinear {
  torch::Tensor weight = torch::tensor({{1.0f, 2.0f}, {3.0f, 4.0f}}).requires_grad_(true);
  torch::Tensor bias = torch::zeros({2}).requires_grad_(true);
  torch::Tensor input = torch::ones({1, 2}).requires_grad_(true);
  torch::Tensor grad_output = torch::ones({1, 2});

  void backward_once() {
    const torch::Tensor output = torch::nn::functional::linear(input, weight, bias);
    runtime::layer_backward(output, grad_output, input, {weight, bias});
  }
};

TEST(LayerBackward, ParametersAccumulateAsInTrainingTheInputDoesNot) {
  TinyLinear layer;
  layer.backward_once();
  EXPECT_TRUE(torch::equal(layer.weight.grad(), torch::ones({2, 2})));
  EXPECT_TRUE(torch::equal(layer.bias.grad(), torch::ones({2})));
  EXPECT_TRUE(torch::equal(layer.input.grad(), torch::tensor({{4.0f, 6.0f}})));

  layer.backward_once();  // a second micro-batch: the parameters' gradients add up
  EXPECT_TRUE(torch::equal(layer.weight.grad(), torch::full({2, 2}, 2.0f)));
  EXPECT_TRUE(torch::equal(layer.bias.grad(), torch::full({2}, 2.0f)));
  EXPECT_TRUE(torch::equal(layer.input.grad(), torch::tensor({{4.0f, 6.0f}})));
}

TEST(LayerBackward, FrozenParametersAndAModelInputGetNoGradient) {
  TinyLinear layer;
  layer.weight.requires_grad_(false);
  layer.input = torch::ones({1, 2});  // the model's own input: nothing to send back
  layer.backward_once();
  EXPECT_FALSE(layer.weight.grad().defined());
  EXPECT_FALSE(layer.input.grad().defined());
  EXPECT_TRUE(torch::equal(layer.bias.grad(), torch::ones({2})));
}

TEST(LayerBackward, AnInputNeedsAGradientOnceATrainableLayerIsBehindIt) {
  // mlp: flatten, fc1, relu1, fc2, relu2, fc3
  const std::vector<bool> mlp{false, true, false, true, false, true};
  EXPECT_FALSE(runtime::input_needs_gradient(mlp, 0, 0));  // the model's input
  EXPECT_FALSE(runtime::input_needs_gradient(mlp, 1, 0));  // fc1 behind the flatten
  EXPECT_TRUE(runtime::input_needs_gradient(mlp, 2, 0));   // relu1 behind fc1
  EXPECT_TRUE(runtime::input_needs_gradient(mlp, 5, 0));
  // A stage from flatten's output on receives an activation and sends its gradient back.
  EXPECT_TRUE(runtime::input_needs_gradient(mlp, 1, 1));
  EXPECT_TRUE(runtime::input_needs_gradient(mlp, 3, 3));
  const std::vector<bool> frozen(4, false);
  EXPECT_FALSE(runtime::input_needs_gradient(frozen, 3, 0));
}

}  // namespace
