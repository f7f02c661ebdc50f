// Seeded synthetic training data for a zoo model: inputs of the model's per-sample shape
// (token ids for models that read tokens) and targets for the chosen loss (random regression
// targets for MSE, as compare_ddp does; class indexes for cross-entropy, and for a model with
// an output per token, llama's, each token's next token: the input shifted by one).
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

#include "runtime/models/model_zoo.h"

namespace runtime {

struct SyntheticBatch {
  at::Tensor input;
  at::Tensor target;
};

// `samples` samples drawn from torch's current generator (seed it first), on the CPU wherever
// the model is (the caller places them). The target width comes from one sample through the
// model in eval mode, on the model's device.
SyntheticBatch make_synthetic_batch(ZooModel& model, const ModelOptions& options, int64_t samples,
                                    const std::string& loss);

// The loss of `output` against a synthetic batch's `target`: "cross_entropy" over classes
// ([batch, classes] against [batch]) or, for a model with an output per token (llama's
// [batch, tokens, vocabulary]), over every token's next-token logits against [batch, tokens];
// "mse" against a target of the output's shape.
at::Tensor training_loss(const std::string& loss, const at::Tensor& output,
                         const at::Tensor& target);

// One sample shaped like the batch's input ([1, ...]), e.g. to infer layer shapes.
at::Tensor sample_of(const SyntheticBatch& batch);

}  // namespace runtime
