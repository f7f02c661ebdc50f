#include "runtime/parallel/reshard.h"

#include <torch/torch.h>

#include <stdexcept>
#include <vector>

namespace runtime {
namespace {

using harness::spmd::FormKind;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

int64_t shard_size(const Communicator& group, int64_t size) {
  if (size % group.world_size() != 0) {
    throw std::invalid_argument("a dimension of " + std::to_string(size) + " does not split over " +
                                std::to_string(group.world_size()) + " ranks");
  }
  return size / group.world_size();
}

at::Tensor own_slice(const Communicator& group, const at::Tensor& whole, int dim) {
  const int64_t size = shard_size(group, whole.size(dim));
  return whole.narrow(dim, group.rank() * size, size).contiguous();
}

// Shards along `dim` from every rank, in rank order.
at::Tensor gather_along(Communicator& group, const at::Tensor& shard, int dim) {
  const at::Tensor input = shard.movedim(dim, 0).contiguous();
  std::vector<int64_t> sizes = input.sizes().vec();
  sizes[0] *= group.world_size();
  at::Tensor output = at::empty(sizes, input.options());
  group.all_gather(output, input)->wait();
  return output.movedim(0, dim).contiguous();
}

at::Tensor sum_everywhere(Communicator& group, const at::Tensor& partial) {
  at::Tensor sum = partial.contiguous().clone();
  group.all_reduce_sum(sum)->wait();
  return sum;
}

// This rank's shard along `dim` of the sum of every rank's partial tensor.
at::Tensor sum_scattered(Communicator& group, const at::Tensor& partial, int dim) {
  const at::Tensor input = partial.movedim(dim, 0).contiguous();
  std::vector<int64_t> sizes = input.sizes().vec();
  sizes[0] = shard_size(group, sizes[0]);
  at::Tensor output = at::empty(sizes, input.options());
  group.reduce_scatter_sum(output, input);
  return output.movedim(0, dim).contiguous();
}

// Sharded along `from` -> sharded along `to`: chunk j of `to` goes to rank j, and the chunks
// that arrive are joined along `from` in rank order.
at::Tensor exchange(Communicator& group, const at::Tensor& shard, int from, int to) {
  shard_size(group, shard.size(to));
  const at::Tensor input = torch::stack(shard.chunk(group.world_size(), to)).contiguous();
  at::Tensor output = at::empty_like(input);
  group.all_to_all(output, input, {}, {})->wait();
  return torch::cat(output.unbind(0), from).contiguous();
}

at::Tensor to_partial(const Communicator& group, const at::Tensor& tensor, TensorForm from) {
  const bool keeps = group.rank() == 0;
  if (from.kind == FormKind::kReplicated) return keeps ? tensor : at::zeros_like(tensor);
  std::vector<int64_t> sizes = tensor.sizes().vec();
  sizes[from.dim] *= group.world_size();
  at::Tensor whole = at::zeros(sizes, tensor.options());
  whole.narrow(from.dim, group.rank() * tensor.size(from.dim), tensor.size(from.dim)).copy_(tensor);
  return whole;
}

// The collective's lane in a trace.
TraceCategory category_of(harness::spmd::Collective collective) {
  switch (collective) {
    case harness::spmd::Collective::kAllGather:
      return TraceCategory::kAllGather;
    case harness::spmd::Collective::kReduceScatter:
      return TraceCategory::kReduceScatter;
    case harness::spmd::Collective::kAllToAll:
      return TraceCategory::kAllToAll;
    default:
      break;
  }
  return TraceCategory::kAllReduce;
}

at::Tensor changed(Communicator& group, const at::Tensor& tensor, TensorForm from, TensorForm to) {
  if (from == to) return tensor;
  if (to.kind == FormKind::kPartial) return to_partial(group, tensor, from);
  switch (from.kind) {
    case FormKind::kReplicated:
      return own_slice(group, tensor, to.dim);
    case FormKind::kPartial:
      return to.kind == FormKind::kReplicated ? sum_everywhere(group, tensor)
                                              : sum_scattered(group, tensor, to.dim);
    case FormKind::kSharded:
      break;
  }
  return to.kind == FormKind::kReplicated ? gather_along(group, tensor, from.dim)
                                          : exchange(group, tensor, from.dim, to.dim);
}

}  // namespace

at::Tensor change_form(Communicator& group, const at::Tensor& tensor, TensorForm from,
                       TensorForm to, TraceRecorder* trace, const std::string& lane) {
  const auto collective = harness::spmd::resharding(from, to);
  if (trace == nullptr || !trace->enabled() || collective == harness::spmd::Collective::kNone) {
    return changed(group, tensor, from, to);
  }
  const double start_us = TraceRecorder::now_us();
  at::Tensor out = changed(group, tensor, from, to);
  trace->add(lane + " " + harness::spmd::collective_name(collective), category_of(collective),
             start_us, TraceRecorder::now_us(),
             {{"bytes", tensor.numel() * tensor.element_size()}});
  return out;
}

namespace {

// Forms travel in the context as integers: kind x 16 + dimension + 1, a pair of them as first x
// 256 + second; the group and the trace as their addresses (the caller's, outliving the graph),
// the trace's lane as its name.
int64_t form_code(TensorForm form) { return static_cast<int64_t>(form.kind) * 16 + form.dim + 1; }
TensorForm form_of(int64_t code) {
  return {static_cast<FormKind>(code / 16), static_cast<int>(code % 16) - 1};
}

TraceRecorder* trace_in(AutogradContext* context) {
  return reinterpret_cast<TraceRecorder*>(context->saved_data["trace"].toInt());
}

class Reshard : public torch::autograd::Function<Reshard> {
 public:
  static at::Tensor forward(AutogradContext* context, const at::Tensor& tensor, int64_t group,
                            int64_t forms, int64_t grad_forms, int64_t trace,
                            const std::string& lane) {
    context->saved_data["group"] = group;
    context->saved_data["grad_forms"] = grad_forms;
    context->saved_data["trace"] = trace;
    context->saved_data["lane"] = lane;
    auto& g = *reinterpret_cast<Communicator*>(group);
    const at::Tensor out =
        change_form(g, tensor, form_of(forms / 256), form_of(forms % 256), trace_in(context), lane);
    return out.is_same(tensor) ? tensor.view_as(tensor) : out;
  }
  static variable_list backward(AutogradContext* context, variable_list gradients) {
    const int64_t grad_forms = context->saved_data["grad_forms"].toInt();
    at::Tensor gradient;
    if (grad_forms >= 0) {
      auto& g = *reinterpret_cast<Communicator*>(context->saved_data["group"].toInt());
      gradient = change_form(g, gradients[0], form_of(grad_forms / 256), form_of(grad_forms % 256),
                             trace_in(context), context->saved_data["lane"].toStringRef());
    }
    return {gradient, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor reshard(Communicator& group, const at::Tensor& tensor, TensorForm from, TensorForm to,
                   std::optional<TensorForm> grad_from, std::optional<TensorForm> grad_to,
                   TraceRecorder* trace, const std::string& lane) {
  const int64_t forms = form_code(from) * 256 + form_code(to);
  const int64_t grad_forms =
      grad_from && grad_to ? form_code(*grad_from) * 256 + form_code(*grad_to) : -1;
  return Reshard::apply(tensor, reinterpret_cast<int64_t>(&group), forms, grad_forms,
                        reinterpret_cast<int64_t>(trace), lane);
}

}  // namespace runtime
