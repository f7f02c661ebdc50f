// How a rank's data axis steps, by the system's ZeRO stage: DDP's bucketed reducer
// (rank/data_parallel_steps.h), ZeRO stage 1-3 over the data group (baselines/sharded/: kind
// sharded, and a tensor-parallel rank's replicas, torchtitan's FSDP x TP "2D"), or alone where
// the axis has one rank. The rank's training loop calls it; its memory report says what the rank
// holds, and with ZeRO the bytes it sent on its data group beside the stage's formula.
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

class DataAxisSteps {
 public:
  // `data_group`: the ranks that hold the same parameters (none: this rank alone).
  DataAxisSteps(const WorkerConfig& config, std::shared_ptr<ZooModel> model,
                Communicator* data_group, TraceRecorder& trace);
  DataAxisSteps(const DataAxisSteps&) = delete;
  DataAxisSteps& operator=(const DataAxisSteps&) = delete;

  void begin_iteration(TraceRecorder& trace);   // gradients cleared
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
