#include "rank/data_parallel_steps.h"

#include <torch/torch.h>

#include <algorithm>

#include "rank/memory_report.h"
#include "runtime/models/moe.h"
#include "runtime/optim/optimizer.h"

namespace runtime {

baselines::ReducerOptions reducer_options_of(const GradientReduction& gradients) {
  baselines::ReducerOptions options;
  options.mode = baselines::parse_sync_mode(gradients.mode);
  options.bucket_mb = gradients.bucket_mb;
  options.first_bucket_mb = gradients.first_bucket_mb;
  options.compression = baselines::parse_gradient_compression(gradients.compression);
  options.power_sgd.rank = gradients.powersgd_rank;
  options.power_sgd.warmup_steps = gradients.powersgd_warmup_steps;
  return options;
}

DataParallelSteps::DataParallelSteps(const WorkerConfig& config, ZooModel& model,
                                     Communicator& comm, Communicator* dense_group)
    : config_(config), model_(model) {
  const ParallelSystem& system = config.system;
  std::vector<at::Tensor> parameters;
  std::vector<std::string> names;
  for (const auto& item : model.named_parameters()) {
    names.push_back(item.key());
    parameters.push_back(item.value());
  }
  const baselines::ReducerOptions reducer = reducer_options_of(system.gradients);
  if (!system.experts) {
    ddp_reducer_ = std::make_unique<baselines::GradientReducer>(parameters, names, comm, reducer);
  } else if (!system.data.sharded()) {
    expert_sync_ = std::make_unique<baselines::ExpertParallelSync>(
        parameters, names, expert_parameters(model), *dense_group, reducer);
  } else {
    counted_ = std::make_unique<CountingCommunicator>(*dense_group);
    const baselines::ReplicaShardOptions shards{
        baselines::zero_stage_from(system.data.zero_stage), reducer, config.optimizer, {}};
    expert_sync_ = std::make_unique<baselines::ExpertParallelSync>(
        parameters, names, expert_parameters(model), *counted_, shards);
  }
  if (!counted_) optimizer_ = make_optimizer(config.optimizer, model.parameters());
}

GradientSync& DataParallelSteps::sync() {
  return expert_sync_ ? static_cast<GradientSync&>(*expert_sync_) : *ddp_reducer_;
}

baselines::GradientReducer* DataParallelSteps::reducer() {
  return expert_sync_ ? expert_sync_->dense_reducer() : ddp_reducer_.get();
}

void DataParallelSteps::begin_iteration(TraceRecorder& trace) {
  if (optimizer_) return optimizer_->zero_grad();
  expert_sync_->dense_shards()->begin_iteration(trace);
}

void DataParallelSteps::step(TraceRecorder& trace) {
  if (optimizer_) {
    optimizer_->step();
  } else {
    expert_sync_->dense_shards()->step(trace);
  }
}

void DataParallelSteps::start_measuring() {
  if (counted_) counted_->reset();
}

nlohmann::json DataParallelSteps::memory() {
  const std::vector<at::Tensor> experts = expert_parameters(model_);
  if (optimizer_) return memory_report(model_.parameters(), experts, *optimizer_);
  baselines::ReplicaShards& shards = *expert_sync_->dense_shards();
  std::vector<at::Tensor> parameters = shards.held_parameters();
  std::vector<at::Tensor> gradients = shards.held_gradients();
  for (const at::Tensor& expert : experts) {
    parameters.push_back(expert);
    gradients.push_back(expert.grad());
  }
  nlohmann::json memory = memory_report(parameters, gradients, experts, shards.optimizer());
  const double iterations = static_cast<double>(std::max(1LL, config_.iterations));
  memory["sharded"] = sharded_report(
      shards.layout(), baselines::zero_stage_from(config_.system.data.zero_stage), "dense",
      parameters.front().element_size(), optimizer_states_per_element(config_.optimizer),
      ring_bytes_sent(counted_->payload(), shards.layout().world_size) / iterations,
      /*reshard_after_forward=*/false);
  return memory;
}

}  // namespace runtime
