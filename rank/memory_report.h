// What a DDP or expert-parallel rank holds after training (memory_rank<r>.json): the bytes of
// its parameters (of them, its experts'), their gradients and the optimizer's state, and the
// process's peak resident memory.
#pragma once

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <nlohmann/json.hpp>

namespace runtime {

nlohmann::json memory_report(torch::nn::Module& model, torch::optim::Optimizer& optimizer);

}  // namespace runtime
