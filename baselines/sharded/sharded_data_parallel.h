// Sharded data parallelism: ZeRO stages 1-3 (Rajbhandari et al.) and, at stage 3, FSDP's
// unit-by-unit gathering. Every rank trains the whole model on its own batch, as under DDP, but
// owns 1/N of each unit's flat parameters (baselines/sharded/shard_layout.h) and steps only
// that shard with the optimizer, so its optimizer state is 1/N (stage 1), and so are its
// gradients (stage 2) and its parameters between uses (stage 3):
//   stage 1 - gradients all-reduced by DDP's overlapped buckets (baselines/ddp), each rank
//             steps its shard, the updated shards all-gathered into every rank's parameters;
//   stage 2 - each unit's gradients reduce-scattered as soon as backward has made them all
//             (overlapping the rest of backward), the full gradients freed, shards stepped and
//             all-gathered;
//   stage 3 - a unit's parameters all-gathered just before its forward and again when backward
//             reaches it, freed after each, the next unit's all-gather queued ahead
//             (`prefetch`) while this one computes; gradients as in stage 2.
// Collectives run on a thread of their own in one order on every rank
// (baselines/sharded/collective_queue.h). Shard steps are element-wise, so the parameters equal
// DDP's from the same seed up to the rounding of the sums (tests/baselines/sharded/).
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/optim/optimizer.h>

#include <memory>
#include <string>
#include <vector>

#include "baselines/ddp/gradient_reducer.h"
#include "baselines/sharded/shard_layout.h"
#include "runtime/comm/communicator.h"
#include "runtime/models/model_zoo.h"
#include "runtime/protocol/trace_recorder.h"
#include "runtime/protocol/worker_config.h"

namespace baselines {

// A unit of sharding: every layer with parameters its own (FSDP's wrapping per block), or the
// whole model as one (the system description's, runtime/parallel/parallel_system.h).
using runtime::ShardUnitKind;

struct ShardedOptions {
  ZeroStage stage = ZeroStage::kParameters;
  ShardUnitKind unit = ShardUnitKind::kLayer;
  bool prefetch = true;    // stage 3: queue the next unit's all-gather ahead of its use
  ReducerOptions reducer;  // stage 1: DDP's all-reduce buckets
};

class ShardedDataParallel {
 public:
  // `model` as every rank built it from the same seed (rank 0's weights already broadcast).
  ShardedDataParallel(std::shared_ptr<runtime::ZooModel> model, runtime::Communicator& group,
                      ShardedOptions options, const runtime::WorkerOptimizer& optimizer);
  ~ShardedDataParallel();
  ShardedDataParallel(const ShardedDataParallel&) = delete;
  ShardedDataParallel& operator=(const ShardedDataParallel&) = delete;

  // The model's forward; stage 3 gathers and frees unit by unit around it.
  at::Tensor forward(const at::Tensor& input);
  // Call after loss.backward(): every shard's gradient (the rank average) is in place.
  void finish_backward();
  // Steps the shards, then (stages 1 and 2) gathers them into every rank's parameters.
  void step();
  void zero_grad();

  const ShardLayout& layout() const;
  torch::optim::Optimizer& optimizer();
  // What the rank holds now, for its memory report: the parameter and gradient tensors
  // (stage 3's parameters: its shards).
  std::vector<at::Tensor> held_parameters() const;
  std::vector<at::Tensor> held_gradients() const;
  // Every parameter, whole, in registration order (a collective at stage 3: call on all ranks).
  std::vector<at::Tensor> full_parameters();

  // All-gathers and reduce-scatters are recorded there while it is enabled.
  void set_trace(runtime::TraceRecorder* trace);

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace baselines
