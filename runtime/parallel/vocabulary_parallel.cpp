#include "runtime/parallel/vocabulary_parallel.h"

#include <torch/torch.h>

#include "runtime/parallel/reshard.h"

namespace runtime {

using harness::spmd::kPartial;
using harness::spmd::kReplicated;
using harness::spmd::sharded;

at::Tensor vocabulary_lookup(const Communicator& group, const at::Tensor& ids,
                             const at::Tensor& table) {
  const int64_t rows = table.size(0), first = group.rank() * rows;
  const at::Tensor held = ((ids >= first) & (ids < first + rows)).unsqueeze(-1);
  return torch::embedding(table, (ids - first).clamp(0, rows - 1)) * held;
}

// The maximum is only a shift that keeps exp() finite: it is detached, as the softmax's value
// does not depend on it.
at::Tensor vocabulary_cross_entropy(Communicator& group, const at::Tensor& logits,
                                    const at::Tensor& targets, double total_tokens,
                                    TraceRecorder* trace, const std::string& lane) {
  const at::Tensor local = logits.to(at::promote_types(logits.scalar_type(), at::kFloat));
  const int64_t width = local.size(-1), first = group.rank() * width;
  const int last = static_cast<int>(local.dim()) - 1;
  const at::Tensor local_max = local.detach().amax(-1, /*keepdim=*/true);
  const at::Tensor max =
      change_form(group, local_max, sharded(last), kReplicated, trace, lane).amax(-1, true);
  const at::Tensor shifted = local - max;
  const at::Tensor sum = reshard(group, shifted.exp().sum(-1), kPartial, kReplicated, kReplicated,
                                 kReplicated, trace, lane);
  const at::Tensor held = (targets >= first) & (targets < first + width);
  const at::Tensor index = (targets - first).clamp(0, width - 1).unsqueeze(-1);
  const at::Tensor picked = shifted.gather(-1, index).squeeze(-1) * held;
  const at::Tensor target =
      reshard(group, picked, kPartial, kReplicated, kReplicated, kReplicated, trace, lane);
  return (sum.log() - target).sum() / total_tokens;
}

}  // namespace runtime
