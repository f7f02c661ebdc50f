// What a rank holds after training (memory_rank<r>.json): the bytes of its parameters (of them,
// its experts'; a pipeline stage's own layers'), their gradients and the optimizer's state, and
// the process's peak resident memory.
#pragma once

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <nlohmann/json.hpp>
#include <vector>

namespace runtime {

nlohmann::json memory_report(const std::vector<torch::Tensor>& parameters,
                             const std::vector<torch::Tensor>& expert_parameters,
                             torch::optim::Optimizer& optimizer);
// The same where the gradients are not the parameters' own (sharded data parallelism's shards).
nlohmann::json memory_report(const std::vector<torch::Tensor>& parameters,
                             const std::vector<torch::Tensor>& gradients,
                             const std::vector<torch::Tensor>& expert_parameters,
                             torch::optim::Optimizer& optimizer);

}  // namespace runtime
