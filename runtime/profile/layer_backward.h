// One layer's backward as the layer profiler times it: the pass a training step makes through
// that layer, gradient accumulation included.
#pragma once

#include <torch/torch.h>

#include <vector>

namespace runtime {

// Backpropagates `grad_output` from `output` (computed by a layer from `input` with
// `parameters`). The parameters' gradients are accumulated into their .grad, as a training
// step's backward does: with .grad already held (every micro-batch after the first; on
// LibTorch 1.13, whose zero_grad() zeroes in place, every backward) that is one more pass over
// the layer's weights, a fifth of a 1024 x 1024 Linear's backward at 16 samples. The input's
// gradient is computed but not accumulated: its .grad is reset first, so it holds this pass's
// gradient alone, as the layer before would receive it inside the model.
void layer_backward(const torch::Tensor& output, const torch::Tensor& grad_output,
                    torch::Tensor input, const std::vector<torch::Tensor>& parameters);

// Whether training computes a gradient for layer `index`'s input, the timed range starting at
// layer `first`, `trainable[i]` saying whether layer i has trainable parameters: a pipeline
// stage sends one back for the activation it received (first > 0); inside the model an input
// needs one once a layer before it is trainable (the first Linear behind a Flatten of the
// model's input computes none). The model's own input never does.
bool input_needs_gradient(const std::vector<bool>& trainable, int index, int first);

}  // namespace runtime
