// A zero-bubble W without the input-gradient work. In one layer's autograd graph, the nodes on
// the input path (those I runs: they lead to the layer's input) that hand gradients to the
// layer's weights -- a linear layer's addmm, a norm's scaling multiply -- are found after its
// forward. While I runs (the gradient of the layer's input alone), each such node's incoming
// gradient is captured as the engine passes it. W then runs each of those nodes from its
// captured gradient with only its weights wanted, so that it computes their gradients (and
// the weight-only nodes below it, such as a transpose) and nothing of the input path
// (torch.distributed.pipelining's stage_backward_weight does the same through the graph's
// intermediates). A node that I did not reach, or a weight two targets would reach, leaves the
// pass unusable, and the caller falls back to a backward with inputs = the weights.
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

namespace runtime {

class WeightPass {
 public:
  // `output`: the layer's output (or the loss it ends in); `input`: the layer's input, a leaf
  // that requires its gradient; `weights`: the layer's parameters that require gradients.
  WeightPass(const at::Tensor& output, const at::Tensor& input,
             const std::vector<at::Tensor>& weights);
  ~WeightPass();
  WeightPass(const WeightPass&) = delete;
  WeightPass& operator=(const WeightPass&) = delete;

  // Capture the weight nodes' incoming gradients from now (true) until armed false.
  void arm(bool on);
  // Accumulates the weight gradients from the captured ones and releases those nodes' saved
  // tensors; false (nothing done) when a weight node was not reached while armed.
  bool run();

 private:
  struct Target;
  std::vector<Target> targets_;
  bool complete_ = false;
};

}  // namespace runtime
