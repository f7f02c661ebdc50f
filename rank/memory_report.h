// What a rank holds after training (memory_rank<r>.json): the bytes of its parameters (of them,
// its experts'; a pipeline stage's own layers'), their gradients and the optimizer's state, and
// the process's peak resident memory.
#pragma once

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "baselines/sharded/shard_layout.h"

namespace runtime {

nlohmann::json memory_report(const std::vector<torch::Tensor>& parameters,
                             const std::vector<torch::Tensor>& expert_parameters,
                             torch::optim::Optimizer& optimizer);
// The same where the gradients are not the parameters' own (sharded data parallelism's shards).
nlohmann::json memory_report(const std::vector<torch::Tensor>& parameters,
                             const std::vector<torch::Tensor>& gradients,
                             const std::vector<torch::Tensor>& expert_parameters,
                             torch::optim::Optimizer& optimizer);

// memory_rank<r>.json's "sharded": how the parameters were cut (the ZeRO stage, the unit, the
// ranks sharing them, elements and a rank's chunk), the bytes the rank sent per measured
// iteration, and what the stage's formula says it holds and sends
// (baselines/sharded/shard_layout.h; `reshard_after_forward` as there).
nlohmann::json sharded_report(const baselines::ShardLayout& layout, baselines::ZeroStage stage,
                              const std::string& unit, int64_t element_bytes,
                              int states_per_element, double bytes_sent_per_iteration,
                              bool reshard_after_forward = true);

}  // namespace runtime
