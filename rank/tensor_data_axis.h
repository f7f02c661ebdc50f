// How a tensor-parallel rank's replicas sum or shard their gradients, across the tensor groups
// (slice j of every replica together): DDP's bucketed reducer (rank/data_parallel_steps.h),
// ZeRO stage 1-3 over the data group (baselines/sharded/: torchtitan's FSDP x TP, "2D"), or
// nothing where there is one replica. The rank's training loop calls it; its memory report says
// what the rank holds, and with ZeRO the bytes it sent on its data group beside the formula.
#pragma once

#include <torch/optim/optimizer.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "baselines/sharded/sharded_data_parallel.h"
#include "rank/data_parallel_steps.h"
#include "runtime/comm/counting_communicator.h"
#include "runtime/models/model_zoo.h"
#include "runtime/protocol/trace_recorder.h"
#include "runtime/protocol/worker_config.h"

namespace runtime {

class TensorDataAxis {
 public:
  // `data_group`: the rank's slice of every replica (none for one replica).
  TensorDataAxis(const WorkerConfig& config, std::shared_ptr<ZooModel> model,
                 Communicator* data_group, TraceRecorder& trace);
  TensorDataAxis(const TensorDataAxis&) = delete;
  TensorDataAxis& operator=(const TensorDataAxis&) = delete;

  void zero_grad();
  at::Tensor forward(const at::Tensor& input);  // ZeRO-3 gathers each unit around its forward
  void finish_backward();
  void step(TraceRecorder& trace);
  void start_measuring();  // the counted bytes start here (the first measured iteration)
  nlohmann::json memory();

 private:
  const WorkerConfig& config_;
  std::shared_ptr<ZooModel> model_;
  std::unique_ptr<DataParallelSteps> replicas_;
  std::unique_ptr<CountingCommunicator> counted_;
  std::unique_ptr<baselines::ShardedDataParallel> sharded_;
  std::unique_ptr<torch::optim::Optimizer> alone_;
};

}  // namespace runtime
