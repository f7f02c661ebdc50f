#include "runtime/profile/layer_backward.h"

#include <algorithm>

namespace runtime {

void layer_backward(const torch::Tensor& output, const torch::Tensor& grad_output,
                    torch::Tensor input, const std::vector<torch::Tensor>& parameters) {
  std::vector<torch::Tensor> inputs;
  if (input.requires_grad()) {
    input.mutable_grad().reset();
    inputs.push_back(input);
  }
  for (const auto& p : parameters) {
    if (p.requires_grad()) inputs.push_back(p);
  }
  // `inputs` limits the pass to this layer's own leaves (a stage's earlier layers are detached
  // from it anyway); an empty list would mean every leaf of the graph.
  if (!inputs.empty()) torch::autograd::backward({output}, {grad_output}, false, false, inputs);
}

bool input_needs_gradient(const std::vector<bool>& trainable, int index, int first) {
  if (index <= 0) return false;
  if (first > 0) return true;
  return std::any_of(trainable.begin(), trainable.begin() + index, [](bool t) { return t; });
}

}  // namespace runtime
