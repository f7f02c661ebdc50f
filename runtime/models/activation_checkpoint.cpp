#include "runtime/models/activation_checkpoint.h"

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

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

class Recompute : public torch::autograd::Function<Recompute> {
 public:
  static at::Tensor forward(AutogradContext* context, const at::Tensor& input, int64_t layer) {
    context->saved_data["layer"] = layer;
    const AutocastState autocast = AutocastState::now();
    context->saved_data["cpu_autocast"] = autocast.cpu;
    context->saved_data["gpu_autocast"] = autocast.gpu;
    context->saved_data["cpu_dtype"] = static_cast<int64_t>(autocast.cpu_dtype);
    context->saved_data["gpu_dtype"] = static_cast<int64_t>(autocast.gpu_dtype);
    context->save_for_backward({input});
    const torch::NoGradGuard no_grad;
    return reinterpret_cast<torch::nn::AnyModule*>(layer)->forward(input);
  }

  static variable_list backward(AutogradContext* context, variable_list gradients) {
    auto& layer = *reinterpret_cast<torch::nn::AnyModule*>(context->saved_data["layer"].toInt());
    const at::Tensor input = context->get_saved_variables()[0].detach().requires_grad_(true);
    const AutocastState before = AutocastState::now();
    const AutocastState during{
        context->saved_data["cpu_autocast"].toBool(), context->saved_data["gpu_autocast"].toBool(),
        static_cast<at::ScalarType>(context->saved_data["cpu_dtype"].toInt()),
        static_cast<at::ScalarType>(context->saved_data["gpu_dtype"].toInt())};
    at::Tensor output;
    {
      const torch::AutoGradMode with_gradients(true);
      during.apply();
      output = layer.forward(input);
      before.apply();
    }
    torch::autograd::backward({output}, {gradients[0]});
    return {input.grad(), at::Tensor()};
  }
};

}  // namespace

torch::Tensor checkpointed_forward(torch::nn::AnyModule& layer, const torch::Tensor& input) {
  return Recompute::apply(input, reinterpret_cast<int64_t>(&layer));
}

}  // namespace runtime
