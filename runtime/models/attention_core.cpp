#include "runtime/models/attention_core.h"

#include <torch/torch.h>

#include <cmath>
#include <limits>

namespace runtime {

at::Tensor attention_core(const at::Tensor& queries, const at::Tensor& keys,
                          const at::Tensor& values, bool causal) {
  const int64_t tokens = queries.size(-2);
  at::Tensor scores =
      torch::matmul(queries, keys.transpose(-2, -1)) / std::sqrt(double(queries.size(-1)));
  if (causal) {
    // Made here, not kept as a buffer: a rank's buffers are broadcast from rank 0's, and Gloo
    // carries no bool tensors.
    const at::Tensor future =
        torch::ones({tokens, tokens}, queries.options().dtype(torch::kBool)).triu(1);
    scores = scores.masked_fill(future, -std::numeric_limits<float>::infinity());
  }
  return torch::matmul(torch::softmax(scores, -1), values);
}

}  // namespace runtime
