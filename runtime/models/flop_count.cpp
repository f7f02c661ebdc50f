#include "runtime/models/flop_count.h"

#include <ATen/record_function.h>
#include <torch/torch.h>

#include <cstring>
#include <functional>
#include <memory>

namespace runtime {
namespace {

// What on_start hands on_end: that the op was a counted one.
struct CountedOp : at::ObserverContext {};

// The counter of the thread inside count_flops (callbacks are plain function pointers).
thread_local double* active_total = nullptr;
thread_local int counted_depth = 0;

std::vector<int64_t> int_list(const c10::IValue& value) {
  return value.isIntList() ? value.toIntList().vec() : std::vector<int64_t>{};
}

// 2 x output elements x multiply-adds per output, for the ops that do a model's arithmetic.
double op_flops(const char* name, c10::ArrayRef<const c10::IValue> inputs) {
  const auto sizes = [&](size_t i) {
    return i < inputs.size() && inputs[i].isTensor() ? inputs[i].toTensor().sizes().vec()
                                                     : std::vector<int64_t>{};
  };
  if (std::strcmp(name, "aten::mm") == 0 || std::strcmp(name, "aten::addmm") == 0) {
    const size_t first = name[6] == 'a' ? 1 : 0;  // addmm(bias, a, b)
    const auto a = sizes(first), b = sizes(first + 1);
    if (a.size() != 2 || b.size() != 2) return 0;
    return 2.0 * a[0] * a[1] * b[1];
  }
  if (std::strcmp(name, "aten::bmm") == 0 || std::strcmp(name, "aten::baddbmm") == 0) {
    const size_t first = name[6] == 'b' && name[7] == 'a' ? 1 : 0;  // baddbmm(self, a, b)
    const auto a = sizes(first), b = sizes(first + 1);
    if (a.size() != 3 || b.size() != 3) return 0;
    return 2.0 * a[0] * a[1] * a[2] * b[2];
  }
  if (std::strcmp(name, "aten::convolution") == 0) {
    // convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
    // groups): every output element is a dot product of (C / groups) x kernel elements.
    const auto input = sizes(0), weight = sizes(1);
    if (input.size() < 3 || weight.size() != input.size() || inputs.size() < 9) return 0;
    if (inputs[6].isBool() && inputs[6].toBool()) return 0;  // transposed: not in the zoo
    const auto stride = int_list(inputs[3]), padding = int_list(inputs[4]),
               dilation = int_list(inputs[5]);
    double outputs = static_cast<double>(input[0]) * weight[0];
    double per_output = static_cast<double>(weight[1]);
    for (size_t d = 2; d < input.size(); ++d) {
      const size_t k = d - 2;
      const int64_t s = k < stride.size() ? stride[k] : 1, p = k < padding.size() ? padding[k] : 0,
                    dl = k < dilation.size() ? dilation[k] : 1;
      outputs *= static_cast<double>((input[d] + 2 * p - dl * (weight[d] - 1) - 1) / s + 1);
      per_output *= static_cast<double>(weight[d]);
    }
    return 2.0 * outputs * per_output;
  }
  return -1;  // not a counted op
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  if (active_total == nullptr) return nullptr;
  const double flops = op_flops(fn.name(), fn.inputs());
  if (flops < 0) return nullptr;
  if (counted_depth++ == 0) *active_total += flops;
  return std::make_unique<CountedOp>();
}

void on_end(const at::RecordFunction&, at::ObserverContext* context) {
  if (context != nullptr) --counted_depth;
}

}  // namespace

double count_flops(const std::function<void()>& work) {
  double total = 0;
  active_total = &total;
  counted_depth = 0;
  const auto handle = at::addThreadLocalCallback(at::RecordFunctionCallback(on_start, on_end)
                                                     .needsInputs(true)
                                                     .scopes({at::RecordScope::FUNCTION}));
  try {
    work();
  } catch (...) {
    at::removeCallback(handle);
    active_total = nullptr;
    throw;
  }
  at::removeCallback(handle);
  active_total = nullptr;
  return total;
}

std::vector<double> layer_forward_flops(ZooModel& model, const torch::Tensor& input) {
  torch::NoGradGuard no_grad;
  std::vector<double> flops;
  torch::Tensor x = input;
  const auto& layers = model.layers();
  for (size_t i = 0; i < layers.size(); ++i) {
    flops.push_back(count_flops([&] { x = model.forward_layers(x, i, i); }));
  }
  return flops;
}

}  // namespace runtime
