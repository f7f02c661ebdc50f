// How a DDP-style rank sums its gradients and steps: DDP's bucketed reducer over every
// parameter, or expert parallelism's sync (baselines/moe/expert_parallel_sync.h) with its dense
// part whole or sharded at ZeRO stage 1 or 2 over the ranks, the experts stepped beside the
// chunk. The rank's training loop calls it; its memory report reads what the rank holds.
#pragma once

#include <torch/optim/optimizer.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "baselines/ddp/gradient_reducer.h"
#include "baselines/moe/expert_parallel_sync.h"
#include "runtime/comm/counting_communicator.h"
#include "runtime/models/model_zoo.h"
#include "runtime/protocol/trace_recorder.h"
#include "runtime/protocol/worker_config.h"

namespace runtime {

// The DDP reducer's options for a system's gradient settings.
baselines::ReducerOptions reducer_options_of(const GradientReduction& gradients);

class DataParallelSteps {
 public:
  // `dense_group`: expert parallelism's group for the dense part (its collectives never
  // interleave with the all-to-alls on `comm`).
  DataParallelSteps(const WorkerConfig& config, ZooModel& model, Communicator& comm,
                    Communicator* dense_group);
  DataParallelSteps(const DataParallelSteps&) = delete;
  DataParallelSteps& operator=(const DataParallelSteps&) = delete;

  GradientSync& sync();
  // The bucketed reducer (buckets.json, the trace's all-reduces); none where the dense part is
  // sharded at stage 2.
  baselines::GradientReducer* reducer();
  // Gradients cleared; a dense part at ZeRO stage 3 gathers the parameters its step freed.
  void begin_iteration(TraceRecorder& trace);
  void step(TraceRecorder& trace);
  // The counted bytes start here (the first measured iteration).
  void start_measuring();
  // memory_rank<r>.json's sizes; with a sharded dense part, its "sharded" beside the formula.
  nlohmann::json memory();

 private:
  const WorkerConfig& config_;
  ZooModel& model_;
  std::unique_ptr<CountingCommunicator> counted_;
  std::unique_ptr<baselines::ExpertParallelSync> expert_sync_;
  std::unique_ptr<baselines::GradientReducer> ddp_reducer_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;  // none where the shards step
};

}  // namespace runtime
