#include "baselines/moe/expert_parallel_sync.h"

#include <algorithm>
#include <stdexcept>

namespace baselines {

ExpertParallelSync::ExpertParallelSync(const std::vector<at::Tensor>& parameters,
                                       const std::vector<std::string>& names,
                                       std::vector<at::Tensor> experts,
                                       runtime::Communicator& communicator, ReducerOptions options)
    : experts_(std::move(experts)), world_size_(communicator.world_size()) {
  if (experts_.empty()) {
    throw std::invalid_argument("expert parallelism needs a model with mixture-of-experts layers");
  }
  const auto is_expert = [&](const at::Tensor& p) {
    return std::any_of(experts_.begin(), experts_.end(),
                       [&](const at::Tensor& e) { return e.is_same(p); });
  };
  std::vector<at::Tensor> dense;
  std::vector<std::string> dense_names;
  for (size_t i = 0; i < parameters.size(); ++i) {
    const int64_t bytes =
        parameters[i].numel() * static_cast<int64_t>(parameters[i].element_size());
    if (is_expert(parameters[i])) {
      expert_bytes_ += bytes;
      continue;
    }
    dense_bytes_ += bytes;
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
