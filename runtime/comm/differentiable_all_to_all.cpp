#include "runtime/comm/differentiable_all_to_all.h"

#include <torch/torch.h>

#include <numeric>

namespace runtime {
namespace {

at::Tensor exchange(Communicator& group, const at::Tensor& input,
                    const std::vector<int64_t>& output_splits,
                    const std::vector<int64_t>& input_splits, TraceRecorder* trace,
                    const std::string& name) {
  const double start_us = TraceRecorder::now_us();
  const int64_t rows = std::accumulate(output_splits.begin(), output_splits.end(), int64_t{0});
  std::vector<int64_t> shape = input.sizes().vec();
  shape[0] = rows;
  at::Tensor output = at::empty(shape, input.options());
  at::Tensor send = input.contiguous();
  const bool two_byte_float =
      input.scalar_type() == at::kBFloat16 || input.scalar_type() == at::kHalf;
  at::Tensor wire_in = two_byte_float ? send.view(at::kShort) : send;
  at::Tensor wire_out = two_byte_float ? output.view(at::kShort) : output;
  group.all_to_all(wire_out, wire_in, output_splits, input_splits)->wait();
  if (trace != nullptr) {
    trace->add(name, TraceCategory::kAllToAll, start_us, TraceRecorder::now_us(),
               {{"sent_bytes", send.numel() * send.element_size()},
                {"received_bytes", output.numel() * output.element_size()}});
  }
  return output;
}

// The communicator and trace travel in the context as integers: autograd's saved data holds
// values, and both outlive every graph built over them (the rank's training loop owns them).
class AllToAllFunction : public torch::autograd::Function<AllToAllFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* context, const at::Tensor& input,
                            int64_t group_address, const std::vector<int64_t>& output_splits,
                            const std::vector<int64_t>& input_splits, int64_t trace_address,
                            const std::string& name) {
    context->saved_data["group"] = group_address;
    context->saved_data["trace"] = trace_address;
    context->saved_data["name"] = name;
    context->saved_data["output_splits"] = output_splits;
    context->saved_data["input_splits"] = input_splits;
    context->saved_data["row_shape"] = input.sizes().slice(1).vec();
    context->saved_data["dtype"] = static_cast<int64_t>(input.scalar_type());
    context->saved_data["device"] = input.device();
    return exchange(*reinterpret_cast<Communicator*>(group_address), input, output_splits,
                    input_splits, reinterpret_cast<TraceRecorder*>(trace_address), name);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list gradients) {
    auto* group = reinterpret_cast<Communicator*>(context->saved_data["group"].toInt());
    const std::vector<int64_t> sent = context->saved_data["input_splits"].toIntVector();
    const std::vector<int64_t> received = context->saved_data["output_splits"].toIntVector();
    // Every rank takes part in the reverse exchange, even one whose rows got no gradient.
    at::Tensor gradient = gradients[0];
    if (!gradient.defined()) {
      std::vector<int64_t> shape = context->saved_data["row_shape"].toIntVector();
      shape.insert(shape.begin(), std::accumulate(received.begin(), received.end(), int64_t{0}));
      gradient = at::zeros(
          shape, at::TensorOptions()
                     .dtype(static_cast<at::ScalarType>(context->saved_data["dtype"].toInt()))
                     .device(context->saved_data["device"].toDevice()));
    }
    auto* trace = reinterpret_cast<TraceRecorder*>(context->saved_data["trace"].toInt());
    const std::string name = context->saved_data["name"].toStringRef() + " backward";
    return {exchange(*group, gradient, sent, received, trace, name),
            at::Tensor(),
            at::Tensor(),
            at::Tensor(),
            at::Tensor(),
            at::Tensor()};
  }
};

}  // namespace

at::Tensor all_to_all_with_grad(Communicator& group, const at::Tensor& input,
                                const std::vector<int64_t>& output_splits,
                                const std::vector<int64_t>& input_splits, TraceRecorder* trace,
                                const std::string& name) {
  const auto address = [](const void* pointer) {
    return static_cast<int64_t>(reinterpret_cast<intptr_t>(pointer));
  };
  // A disabled recorder keeps nothing: it is left out, and the exchange records nothing.
  TraceRecorder* kept = trace != nullptr && trace->enabled() ? trace : nullptr;
  return AllToAllFunction::apply(input, address(&group), output_splits, input_splits, address(kept),
                                 name);
}

}  // namespace runtime
