// Model FLOPs, the numerator of MFU: counted from the matrix products and convolutions LibTorch
// actually runs in one forward pass (aten::mm, addmm, bmm, baddbmm, convolution), from their
// operand shapes, as PyTorch's own profiler counts them (with_flops). Element-wise work,
// normalisation and the optimizer are not model FLOPs. Training counts backward as twice the
// forward (gradients with respect to inputs and to weights): 3x forward per sample, the
// convention MFU is reported in.
#pragma once

#include <torch/types.h>

#include <vector>

#include "runtime/models/model_zoo.h"

namespace runtime {

// Forward FLOPs of each layer of `model` for `input` (its batch included), in chain order.
std::vector<double> layer_forward_flops(ZooModel& model, const torch::Tensor& input);

// FLOPs of whatever `work` runs on this thread (only outermost counted ops: a convolution's
// own inner products are not counted twice).
double count_flops(const std::function<void()>& work);

}  // namespace runtime
