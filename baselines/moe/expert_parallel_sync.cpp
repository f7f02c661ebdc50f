#include "baselines/moe/expert_parallel_sync.h"

#include <stdexcept>

#include "runtime/models/moe.h"

namespace baselines {

ExpertParallelSync::ExpertParallelSync(const std::vector<at::Tensor>& parameters,
                                       const std::vector<std::string>& names,
                                       std::vector<at::Tensor> experts,
                                       runtime::Communicator& communicator, ReducerOptions options)
    : experts_(std::move(experts)), world_size_(communicator.world_size()) {
  if (experts_.empty()) {
    throw std::invalid_argument("expert parallelism needs a model with mixture-of-experts layers");
  }
  std::vector<at::Tensor> dense;
  std::vector<std::string> dense_names;
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (runtime::is_expert_parameter(experts_, parameters[i])) continue;
    dense.push_back(parameters[i]);
    dense_names.push_back(names.at(i));
  }
  options.average = true;
  dense_ = std::make_unique<GradientReducer>(std::move(dense), std::move(dense_names), communicator,
                                             options);
}

void ExpertParallelSync::finish_backward() {
  dense_->finish_backward();
  for (auto& p : experts_) {
    if (p.grad().defined()) p.grad().div_(world_size_);
  }
}

}  // namespace baselines
