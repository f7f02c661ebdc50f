#include "runtime/parallel/tensor_region.h"

#include <torch/torch.h>

#include <stdexcept>

namespace runtime {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

bool sixteen_bit_float(const at::Tensor& t) {
  return t.scalar_type() == at::kBFloat16 || t.scalar_type() == at::kHalf;
}

void record_tensor_collective(const TensorRegion& region, const char* name, TraceCategory category,
                              double start_us, const at::Tensor& payload) {
  if (region.trace == nullptr || !region.trace->enabled()) return;
  region.trace->add(name, category, start_us, TraceRecorder::now_us(),
                    {{"bytes", payload.numel() * payload.element_size()}});
}

// Gloo sums no 16-bit floats: those are summed in fp32 and rounded back once.
at::Tensor tensor_all_reduce(TensorRegion& region, const at::Tensor& partial) {
  const double start_us = TraceRecorder::now_us();
  at::Tensor sum =
      sixteen_bit_float(partial) ? partial.to(at::kFloat) : partial.contiguous().clone();
  region.group->all_reduce_sum(sum)->wait();
  record_tensor_collective(region, "tensor all-reduce", TraceCategory::kAllReduce, start_us,
                           partial);
  return sum.to(partial.scalar_type());
}

// [batch, tokens / degree, width] from every rank -> [batch, tokens, width], rank order.
at::Tensor all_gather_tokens(TensorRegion& region, const at::Tensor& shard) {
  const double start_us = TraceRecorder::now_us();
  const at::Tensor input = shard.contiguous();
  std::vector<int64_t> stacked = input.sizes().vec();
  stacked[0] *= region.degree;
  at::Tensor output = at::empty(stacked, input.options());
  const bool bytes_only = sixteen_bit_float(input);
  region.group
      ->all_gather(bytes_only ? output.view(at::kHalf) : output,
                   bytes_only ? input.view(at::kHalf) : input)
      ->wait();
  record_tensor_collective(region, "tensor all-gather", TraceCategory::kAllGather, start_us, input);
  const int64_t batch = input.size(0), tokens = input.size(1);
  return output.view({region.degree, batch, tokens, -1})
      .transpose(0, 1)
      .reshape({batch, tokens * region.degree, -1});
}

// [batch, tokens, width] partial sums -> this rank's [batch, tokens / degree, width] of the sum;
// the input as the degree's chunks along dimension 0, each a [batch, tokens / degree, width].
at::Tensor reduce_scatter_tokens(TensorRegion& region, const at::Tensor& partial) {
  const double start_us = TraceRecorder::now_us();
  const int64_t batch = partial.size(0), tokens = partial.size(1) / region.degree;
  const at::Tensor by_rank =
      partial.to(sixteen_bit_float(partial) ? at::kFloat : partial.scalar_type())
          .view({batch, region.degree, tokens, -1})
          .transpose(0, 1)
          .reshape({region.degree * batch, tokens, -1});
  at::Tensor output = at::empty({batch, tokens, by_rank.size(2)}, by_rank.options());
  region.group->reduce_scatter_sum(output, by_rank);
  record_tensor_collective(region, "tensor reduce-scatter", TraceCategory::kReduceScatter, start_us,
                           partial);
  return output.to(partial.scalar_type());
}

at::Tensor own_tokens(const TensorRegion& region, const at::Tensor& whole) {
  const int64_t tokens = whole.size(1) / region.degree;
  return whole.narrow(1, region.index * tokens, tokens).contiguous();
}

TensorRegion& region_in(AutogradContext* context) {
  auto& region = *reinterpret_cast<TensorRegion*>(context->saved_data["region"].toInt());
  if (region.group == nullptr) {
    throw std::logic_error("a split layer ran before its tensor group was set");
  }
  return region;
}

int64_t region_address(TensorRegion& region) { return reinterpret_cast<int64_t>(&region); }

// The region travels in the context as an integer: the model owns it and outlives its graphs.
class EnterRegion : public torch::autograd::Function<EnterRegion> {
 public:
  static at::Tensor forward(AutogradContext* context, const at::Tensor& input, int64_t region) {
    context->saved_data["region"] = region;
    TensorRegion& r = region_in(context);
    return r.sequence_parallel ? all_gather_tokens(r, input) : input.view_as(input);
  }
  static variable_list backward(AutogradContext* context, variable_list gradients) {
    TensorRegion& r = region_in(context);
    return {r.sequence_parallel ? reduce_scatter_tokens(r, gradients[0])
                                : tensor_all_reduce(r, gradients[0]),
            at::Tensor()};
  }
};

class LeaveRegion : public torch::autograd::Function<LeaveRegion> {
 public:
  static at::Tensor forward(AutogradContext* context, const at::Tensor& partial, int64_t region) {
    context->saved_data["region"] = region;
    TensorRegion& r = region_in(context);
    return r.sequence_parallel ? reduce_scatter_tokens(r, partial) : tensor_all_reduce(r, partial);
  }
  static variable_list backward(AutogradContext* context, variable_list gradients) {
    TensorRegion& r = region_in(context);
    return {r.sequence_parallel ? all_gather_tokens(r, gradients[0]) : gradients[0], at::Tensor()};
  }
};

class SplitSequence : public torch::autograd::Function<SplitSequence> {
 public:
  static at::Tensor forward(AutogradContext* context, const at::Tensor& whole, int64_t region) {
    context->saved_data["region"] = region;
    return own_tokens(region_in(context), whole);
  }
  static variable_list backward(AutogradContext* context, variable_list gradients) {
    return {all_gather_tokens(region_in(context), gradients[0]), at::Tensor()};
  }
};

class GatherSequence : public torch::autograd::Function<GatherSequence> {
 public:
  static at::Tensor forward(AutogradContext* context, const at::Tensor& shard, int64_t region) {
    context->saved_data["region"] = region;
    return all_gather_tokens(region_in(context), shard);
  }
  static variable_list backward(AutogradContext* context, variable_list gradients) {
    return {own_tokens(region_in(context), gradients[0]), at::Tensor()};
  }
};

// The gradients of one projection out = whole @ weight^T + bias, in the gradient's precision
// (an autocast projection's), each returned in its tensor's own type.
struct ProjectionGradients {
  at::Tensor input, weight, bias;
};
ProjectionGradients projection_gradients(const at::Tensor& gradient, const at::Tensor& whole,
                                         const at::Tensor& weight, const at::Tensor& bias) {
  const at::ScalarType type = gradient.scalar_type();
  const at::Tensor rows = gradient.flatten(0, -2);
  ProjectionGradients out;
  out.input = gradient.matmul(weight.to(type)).to(whole.scalar_type());
  out.weight = rows.t().matmul(whole.flatten(0, -2).to(type)).to(weight.scalar_type());
  if (bias.numel() > 0) out.bias = rows.sum(0).to(bias.scalar_type());
  return out;
}

// Sequence parallelism keeping only its shards (gathered_projections): up to three projections
// of one gathered input. The absent weights and biases are empty tensors: a custom function
// takes no undefined input.
class GatheredProjections : public torch::autograd::Function<GatheredProjections> {
 public:
  static variable_list forward(AutogradContext* context, const at::Tensor& shard,
                               const at::Tensor& w0, const at::Tensor& b0, const at::Tensor& w1,
                               const at::Tensor& b1, const at::Tensor& w2, const at::Tensor& b2,
                               int64_t region) {
    context->saved_data["region"] = region;
    context->save_for_backward({shard, w0, b0, w1, b1, w2, b2});
    const at::Tensor whole = all_gather_tokens(region_in(context), shard);
    variable_list outputs;
    for (const auto& [w, b] : {std::pair{w0, b0}, std::pair{w1, b1}, std::pair{w2, b2}}) {
      if (w.numel() > 0) outputs.push_back(at::linear(whole, w, b.numel() > 0 ? b : at::Tensor()));
    }
    return outputs;
  }
  static variable_list backward(AutogradContext* context, variable_list gradients) {
    TensorRegion& r = region_in(context);
    const variable_list saved = context->get_saved_variables();
    const at::Tensor whole = all_gather_tokens(r, saved[0]);  // the shard gathered again
    variable_list out(8);  // one a forward input: the shard, 3 weights and biases, the region
    at::Tensor input;
    for (size_t p = 0; p < 3 && saved[1 + 2 * p].numel() > 0; ++p) {
      if (!gradients[p].defined()) continue;  // an output backward did not reach
      const ProjectionGradients g =
          projection_gradients(gradients[p], whole, saved[1 + 2 * p], saved[2 + 2 * p]);
      input = input.defined() ? input + g.input : g.input;
      out[1 + 2 * p] = g.weight;
      out[2 + 2 * p] = g.bias;
    }
    if (input.defined()) out[0] = reduce_scatter_tokens(r, input);
    return out;
  }
};

}  // namespace

int64_t TensorRegion::share_of(int64_t count, const std::string& what) const {
  if (degree < 1 || count % degree != 0) {
    throw std::invalid_argument(what + " (" + std::to_string(count) +
                                ") do not split evenly over a tensor axis of " +
                                std::to_string(degree));
  }
  return count / degree;
}

std::shared_ptr<TensorRegion> make_tensor_region(int64_t index, int64_t degree,
                                                 bool sequence_parallel, bool regathers) {
  if (degree <= 1) return nullptr;
  if (index < 0 || index >= degree) {
    throw std::invalid_argument("tensor shard " + std::to_string(index) + " of " +
                                std::to_string(degree));
  }
  auto region = std::make_shared<TensorRegion>();
  region->index = static_cast<int>(index);
  region->degree = static_cast<int>(degree);
  region->sequence_parallel = sequence_parallel;
  region->regathers = sequence_parallel && regathers;
  return region;
}

at::Tensor enter_tensor_region(TensorRegion& region, const at::Tensor& input) {
  return EnterRegion::apply(input, region_address(region));
}

at::Tensor leave_tensor_region(TensorRegion& region, const at::Tensor& partial) {
  return LeaveRegion::apply(partial, region_address(region));
}

at::Tensor split_sequence(TensorRegion& region, const at::Tensor& whole) {
  region.share_of(whole.size(1), "the tokens");
  return SplitSequence::apply(whole, region_address(region));
}

at::Tensor gather_sequence(TensorRegion& region, const at::Tensor& shard) {
  return GatherSequence::apply(shard, region_address(region));
}

std::vector<at::Tensor> gathered_projections(TensorRegion& region, const at::Tensor& shard,
                                             const std::vector<Projection>& projections) {
  if (projections.empty() || projections.size() > 3) {
    throw std::invalid_argument("gathered_projections takes 1 to 3 projections");
  }
  const at::Tensor absent = at::empty({0}, shard.options());
  Projection p[3] = {{absent, absent}, {absent, absent}, {absent, absent}};
  for (size_t i = 0; i < projections.size(); ++i) {
    p[i].weight = projections[i].weight;
    if (projections[i].bias.defined()) p[i].bias = projections[i].bias;
  }
  return GatheredProjections::apply(shard, p[0].weight, p[0].bias, p[1].weight, p[1].bias,
                                    p[2].weight, p[2].bias, region_address(region));
}

std::vector<at::Tensor> column_projections(TensorRegion* region, const at::Tensor& x,
                                           const std::vector<Projection>& projections) {
  if (region != nullptr && region->regathers) return gathered_projections(*region, x, projections);
  const at::Tensor input = region != nullptr ? enter_tensor_region(*region, x) : x;
  std::vector<at::Tensor> outputs;
  for (const Projection& p : projections) outputs.push_back(at::linear(input, p.weight, p.bias));
  return outputs;
}

void add_partial_parameter(TensorRegion& region, at::Tensor& parameter) {
  ++region.partial_parameters;
  parameter.register_hook([&region](const at::Tensor& gradient) {
    if (region.group == nullptr) {
      throw std::logic_error("a partial gradient arrived before its tensor group was set");
    }
    return tensor_all_reduce(region, gradient);
  });
}

at::Tensor column_shard(const TensorRegion& region, const at::Tensor& weight) {
  const int64_t rows = region.share_of(weight.size(0), "the rows of a column-parallel weight");
  return weight.narrow(0, region.index * rows, rows).clone();
}

at::Tensor row_shard(const TensorRegion& region, const at::Tensor& weight) {
  const int64_t columns = region.share_of(weight.size(1), "the columns of a row-parallel weight");
  return weight.narrow(1, region.index * columns, columns).clone();
}

at::Tensor grouped_column_shard(const TensorRegion& region, const at::Tensor& weight,
                                int64_t groups) {
  std::vector<at::Tensor> parts;
  for (const at::Tensor& part : weight.chunk(groups, 0))
    parts.push_back(column_shard(region, part));
  return at::cat(parts, 0);
}

}  // namespace runtime
