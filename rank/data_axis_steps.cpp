#include "rank/data_axis_steps.h"

#include <torch/torch.h>

#include <algorithm>

#include "rank/memory_report.h"
#include "runtime/optim/optimizer.h"

namespace runtime {

DataAxisSteps::DataAxisSteps(const WorkerConfig& config, std::shared_ptr<ZooModel> model,
                             Communicator* data_group, TraceRecorder& trace)
    : config_(config), model_(std::move(model)) {
  const ParallelSystem& system = config.system;
  if (data_group == nullptr) {
    alone_ = make_optimizer(config.optimizer, model_->parameters());
  } else if (!system.data.sharded()) {
    replicas_ = std::make_unique<DataParallelSteps>(config, *model_, *data_group, nullptr);
    if (replicas_->reducer() != nullptr) replicas_->reducer()->set_trace(&trace);
  } else {
    counted_ = std::make_unique<CountingCommunicator>(*data_group);
    const baselines::ShardedOptions options{baselines::zero_stage_from(system.data.zero_stage),
                                            system.data.unit, system.data.prefetch,
                                            reducer_options_of(system.gradients)};
    sharded_ = std::make_unique<baselines::ShardedDataParallel>(model_, *counted_, options,
                                                                config.optimizer);
    sharded_->set_trace(&trace);
  }
}

void DataAxisSteps::begin_iteration(TraceRecorder& trace) {
  if (replicas_) replicas_->begin_iteration(trace);
  if (sharded_) sharded_->zero_grad();
  if (alone_) alone_->zero_grad();
}

at::Tensor DataAxisSteps::forward(const at::Tensor& input) {
  return sharded_ ? sharded_->forward(input) : model_->forward(input);
}

void DataAxisSteps::finish_backward() {
  if (replicas_) replicas_->sync().finish_backward();
  if (sharded_) sharded_->finish_backward();
}

void DataAxisSteps::step(TraceRecorder& trace) {
  if (replicas_) replicas_->step(trace);
  if (sharded_) sharded_->step();
  if (alone_) alone_->step();
}

void DataAxisSteps::start_measuring() {
  if (counted_) counted_->reset();
}

nlohmann::json DataAxisSteps::memory() {
  if (replicas_) return replicas_->memory();
  if (alone_) return memory_report(model_->parameters(), {}, *alone_);
  nlohmann::json memory = memory_report(sharded_->held_parameters(), sharded_->held_gradients(), {},
                                        sharded_->optimizer());
  const double iterations = static_cast<double>(std::max(1LL, config_.iterations));
  const DataAxis& data = config_.system.data;
  memory["sharded"] = sharded_report(
      sharded_->layout(), baselines::zero_stage_from(data.zero_stage), to_string(data.unit),
      model_->parameters().front().element_size(), optimizer_states_per_element(config_.optimizer),
      ring_bytes_sent(counted_->payload(), counted_->world_size()) / iterations);
  return memory;
}

}  // namespace runtime
