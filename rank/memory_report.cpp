#include "rank/memory_report.h"

#include <torch/torch.h>

#include "common/environment_info.h"
#include "runtime/optim/optimizer.h"

namespace runtime {
namespace {

long long tensor_bytes(const std::vector<at::Tensor>& tensors) {
  long long bytes = 0;
  for (const auto& t : tensors) {
    if (t.defined()) bytes += t.numel() * static_cast<long long>(t.element_size());
  }
  return bytes;
}

}  // namespace

nlohmann::json memory_report(const std::vector<torch::Tensor>& parameters,
                             const std::vector<torch::Tensor>& expert_parameters,
                             torch::optim::Optimizer& optimizer) {
  std::vector<at::Tensor> gradients;
  for (const auto& p : parameters) gradients.push_back(p.grad());
  return memory_report(parameters, gradients, expert_parameters, optimizer);
}

nlohmann::json memory_report(const std::vector<torch::Tensor>& parameters,
                             const std::vector<torch::Tensor>& gradients,
                             const std::vector<torch::Tensor>& expert_parameters,
                             torch::optim::Optimizer& optimizer) {
  return {{"parameter_bytes", tensor_bytes(parameters)},
          {"expert_parameter_bytes", tensor_bytes(expert_parameters)},
          {"gradient_bytes", tensor_bytes(gradients)},
          {"optimizer_state_bytes", tensor_bytes(optimizer_state_tensors(optimizer))},
          {"peak_resident_bytes", harness::peak_resident_bytes()}};
}

nlohmann::json sharded_report(const baselines::ShardLayout& layout, baselines::ZeroStage stage,
                              const std::string& unit, int64_t element_bytes,
                              int states_per_element, double bytes_sent_per_iteration,
                              bool reshard_after_forward) {
  const auto formula = baselines::sharded_memory(layout, stage, element_bytes, states_per_element);
  return {{"stage", baselines::stage_number(stage)},
          {"unit", unit},
          {"units", layout.units.size()},
          {"replicas", layout.world_size},
          {"elements", layout.elements()},
          {"shard_elements", layout.shard_elements()},
          {"bytes_sent_per_iteration", bytes_sent_per_iteration},
          {"formula",
           {{"parameter_bytes", formula.parameter_bytes},
            {"gradient_bytes", formula.gradient_bytes},
            {"optimizer_state_bytes", formula.optimizer_state_bytes},
            {"bytes_sent_per_iteration",
             baselines::sharded_traffic(layout, stage, element_bytes, reshard_after_forward)
                 .total()}}}};
}

}  // namespace runtime
