#include "runtime/optim/optimizer.h"

#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include <stdexcept>

namespace runtime {

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const WorkerOptimizer& config,
                                                        std::vector<torch::Tensor> parameters) {
  if (config.name == "adamw") {
    return std::make_unique<torch::optim::AdamW>(std::move(parameters),
                                                 torch::optim::AdamWOptions(config.lr)
                                                     .betas({config.beta1, config.beta2})
                                                     .eps(config.eps)
                                                     .weight_decay(config.weight_decay));
  }
  if (config.name == "sgd") {
    return std::make_unique<torch::optim::SGD>(std::move(parameters),
                                               torch::optim::SGDOptions(config.lr)
                                                   .momentum(config.momentum)
                                                   .weight_decay(config.weight_decay));
  }
  throw std::invalid_argument("unknown optimizer '" + config.name + "' (expected sgd or adamw)");
}

std::vector<torch::Tensor> optimizer_state_tensors(torch::optim::Optimizer& optimizer) {
  std::vector<torch::Tensor> state;
  for (const auto& [key, value] : optimizer.state()) {
    if (auto* sgd = dynamic_cast<torch::optim::SGDParamState*>(value.get())) {
      state.push_back(sgd->momentum_buffer());
    } else if (auto* adamw = dynamic_cast<torch::optim::AdamWParamState*>(value.get())) {
      state.push_back(adamw->exp_avg());
      state.push_back(adamw->exp_avg_sq());
      state.push_back(adamw->max_exp_avg_sq());  // amsgrad only; undefined otherwise
    }
  }
  return state;
}

int optimizer_states_per_element(const WorkerOptimizer& config) {
  if (config.name == "adamw") return 2;
  return config.momentum != 0 ? 1 : 0;
}

}  // namespace runtime
