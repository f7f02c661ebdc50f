#include "baselines/moe/expert_parallel_sync.h"

#include <stdexcept>

#include "runtime/models/moe.h"

namespace baselines {

namespace {

struct DensePart {
  std::vector<at::Tensor> parameters;
  std::vector<std::string> names;
};

// Everything but the experts, in registration order.
DensePart dense_part(const std::vector<at::Tensor>& parameters,
                     const std::vector<std::string>& names,
                     const std::vector<at::Tensor>& experts) {
  if (experts.empty()) {
    throw std::invalid_argument("expert parallelism needs a model with mixture-of-experts layers");
  }
  DensePart dense;
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (runtime::is_expert_parameter(experts, parameters[i])) continue;
    dense.parameters.push_back(parameters[i]);
    dense.names.push_back(names.at(i));
  }
  return dense;
}

}  // namespace

ExpertParallelSync::ExpertParallelSync(const std::vector<at::Tensor>& parameters,
                                       const std::vector<std::string>& names,
                                       std::vector<at::Tensor> experts,
                                       runtime::Communicator& communicator, ReducerOptions options)
    : experts_(std::move(experts)), world_size_(communicator.world_size()) {
  DensePart dense = dense_part(parameters, names, experts_);
  options.average = true;
  dense_ = std::make_unique<GradientReducer>(std::move(dense.parameters), std::move(dense.names),
                                             communicator, options);
}

ExpertParallelSync::ExpertParallelSync(const std::vector<at::Tensor>& parameters,
                                       const std::vector<std::string>& names,
                                       std::vector<at::Tensor> experts,
                                       runtime::Communicator& communicator,
                                       ReplicaShardOptions dense_shards)
    : experts_(std::move(experts)), world_size_(communicator.world_size()) {
  DensePart dense = dense_part(parameters, names, experts_);
  dense_shards.reducer.average = true;
  dense_shards.local_parameters = experts_;
  shards_ = std::make_unique<ReplicaShards>(std::move(dense.parameters), std::move(dense.names),
                                            communicator, dense_shards);
}

GradientReducer* ExpertParallelSync::dense_reducer() {
  return dense_ ? dense_.get() : shards_->reducer();
}

void ExpertParallelSync::finish_backward() {
  if (dense_) dense_->finish_backward();
  if (shards_) shards_->finish_backward();
  for (auto& p : experts_) {
    if (p.grad().defined()) p.grad().div_(world_size_);
  }
}

}  // namespace baselines
