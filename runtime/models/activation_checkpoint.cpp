#include "runtime/models/activation_checkpoint.h"

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include "runtime/models/attention_core.h"

namespace runtime {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Autocast as the first forward ran: re-entered for the recomputation, restored after.
struct AutocastState {
  bool cpu = false, gpu = false;
  at::ScalarType cpu_dtype = at::kBFloat16, gpu_dtype = at::kHalf;
  static AutocastState now() {
    return {at::autocast::is_cpu_enabled(), at::autocast::is_enabled(),
            at::autocast::get_autocast_cpu_dtype(), at::autocast::get_autocast_gpu_dtype()};
  }
  void apply() const {
    at::autocast::set_cpu_enabled(cpu);
    at::autocast::set_enabled(gpu);
    at::autocast::set_autocast_cpu_dtype(cpu_dtype);
    at::autocast::set_autocast_gpu_dtype(gpu_dtype);
  }
};

// Forward's autocast, kept with the graph node for its recomputation.
void save_autocast(AutogradContext* context) {
  const AutocastState autocast = AutocastState::now();
  context->saved_data["cpu_autocast"] = autocast.cpu;
  context->saved_data["gpu_autocast"] = autocast.gpu;
  context->saved_data["cpu_dtype"] = static_cast<int64_t>(autocast.cpu_dtype);
  context->saved_data["gpu_dtype"] = static_cast<int64_t>(autocast.gpu_dtype);
}

// `forward` run again with gradients under the autocast forward saw, the state restored after.
template <typename Forward>
at::Tensor recompute(AutogradContext* context, Forward forward) {
  const AutocastState before = AutocastState::now();
  const AutocastState during{context->saved_data["cpu_autocast"].toBool(),
                             context->saved_data["gpu_autocast"].toBool(),
                             static_cast<at::ScalarType>(context->saved_data["cpu_dtype"].toInt()),
                             static_cast<at::ScalarType>(context->saved_data["gpu_dtype"].toInt())};
  const torch::AutoGradMode with_gradients(true);
  during.apply();
  at::Tensor output = forward();
  before.apply();
  return output;
}

class Recompute : public torch::autograd::Function<Recompute> {
 public:
  static at::Tensor forward(AutogradContext* context, const at::Tensor& input, int64_t layer) {
    context->saved_data["layer"] = layer;
    save_autocast(context);
    context->save_for_backward({input});
    const torch::NoGradGuard no_grad;
    return reinterpret_cast<torch::nn::AnyModule*>(layer)->forward(input);
  }

  static variable_list backward(AutogradContext* context, variable_list gradients) {
    auto& layer = *reinterpret_cast<torch::nn::AnyModule*>(context->saved_data["layer"].toInt());
    const at::Tensor input = context->get_saved_variables()[0].detach().requires_grad_(true);
    const at::Tensor output = recompute(context, [&] { return layer.forward(input); });
    torch::autograd::backward({output}, {gradients[0]});
    return {input.grad(), at::Tensor()};
  }
};

class RecomputedCore : public torch::autograd::Function<RecomputedCore> {
 public:
  static at::Tensor forward(AutogradContext* context, const at::Tensor& queries,
                            const at::Tensor& keys, const at::Tensor& values, bool causal) {
    context->saved_data["causal"] = causal;
    save_autocast(context);
    context->save_for_backward({queries, keys, values});
    const torch::NoGradGuard no_grad;
    return attention_core(queries, keys, values, causal);
  }

  static variable_list backward(AutogradContext* context, variable_list gradients) {
    variable_list in = context->get_saved_variables();
    for (at::Tensor& input : in) input = input.detach().requires_grad_(true);
    const bool causal = context->saved_data["causal"].toBool();
    const at::Tensor output =
        recompute(context, [&] { return attention_core(in[0], in[1], in[2], causal); });
    torch::autograd::backward({output}, {gradients[0]});
    return {in[0].grad(), in[1].grad(), in[2].grad(), at::Tensor()};
  }
};

}  // namespace

at::Tensor recomputed_attention_core(const at::Tensor& queries, const at::Tensor& keys,
                                     const at::Tensor& values, bool causal) {
  return RecomputedCore::apply(queries, keys, values, causal);
}

torch::Tensor checkpointed_forward(torch::nn::AnyModule& layer, const torch::Tensor& input) {
  return Recompute::apply(input, reinterpret_cast<int64_t>(&layer));
}

}  // namespace runtime
