// Full activation checkpointing of one layer (Chen et al., 2016; Megatron-LM's "full"
// recomputation): forward runs the layer without keeping what backward would need, only its
// input; backward runs the layer's forward again, with gradients, and backpropagates through
// it. What autograd keeps per checkpointed layer is its input, at the cost of a second forward.
// The same operations in the same order: the gradients are bit-identical to the layer's own on
// a CPU (the zoo's blocks draw no random numbers). Autocast is re-entered as forward saw it.
#pragma once

#include <torch/nn/modules/container/any.h>
#include <torch/types.h>

namespace runtime {

// The layer's output, its activations dropped; `input` must require a gradient (the layer's
// parameters get theirs through it). `layer` must outlive the graph.
torch::Tensor checkpointed_forward(torch::nn::AnyModule& layer, const torch::Tensor& input);

// Selective recomputation (Korthikanti et al., 2022, section 5): an attention core
// (runtime/models/attention_core.h) whose activations -- they grow with the square of the
// sequence, and it holds no parameters -- are dropped and recomputed in backward, keeping only
// its queries, keys and values.
at::Tensor recomputed_attention_core(const at::Tensor& queries, const at::Tensor& keys,
                                     const at::Tensor& values, bool causal);

}  // namespace runtime
