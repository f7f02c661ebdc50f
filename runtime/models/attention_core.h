// The core of scaled dot-product attention -- scores, softmax, the weighted sum of the values --
// shared by the zoo's llama and bert blocks, which selective recomputation runs again in
// backward (runtime/models/activation_checkpoint.h).
#pragma once

#include <ATen/core/Tensor.h>

namespace runtime {

// softmax(q k^T / sqrt(head width)) v over [batch, heads, tokens, head width]; `causal`: token
// t attends to tokens 0..t.
at::Tensor attention_core(const at::Tensor& queries, const at::Tensor& keys,
                          const at::Tensor& values, bool causal);

}  // namespace runtime
