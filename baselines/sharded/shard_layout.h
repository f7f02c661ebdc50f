// How sharded data parallelism (ZeRO stages 1-3, FSDP) splits a model over N ranks, and what
// each stage then holds and sends: plain C++, so that the simulator prices it and tests check
// the runtime against it without LibTorch.
//
// The model is cut into units (a layer each, or the whole model as one). A unit's parameters are
// laid end to end in one flat buffer, padded to a multiple of N elements, and rank r owns
// elements [r c, (r + 1) c) of it, c = ceil(elements / N): FSDP1's FlatParameter and
// DeepSpeed's partitions, which is what lets every collective move N equal chunks. Padding
// elements are zero, get zero gradients and stay zero under SGD and AdamW.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace baselines {

// What is partitioned: 1 the optimizer state; 2 also the gradients; 3 also the parameters.
enum class ZeroStage { kOptimizerState = 1, kGradients = 2, kParameters = 3 };

// 1, 2 or 3; throws std::invalid_argument otherwise.
ZeroStage zero_stage_from(long long stage);
int stage_number(ZeroStage stage);

struct ShardUnit {
  std::string name;             // the layer's name ("layers.0"), or "model" for one unit
  std::vector<int64_t> numels;  // its parameters', in registration order
  int64_t elements = 0;         // their sum
  int64_t shard_elements = 0;   // c: ceil(elements / world)
  int64_t padded_elements = 0;  // world x c: its flat buffer
};

struct ShardLayout {
  int world_size = 1;
  std::vector<ShardUnit> units;
  int64_t elements() const;         // the model's parameters
  int64_t shard_elements() const;   // what one rank owns, padding included
  int64_t padded_elements() const;  // world_size x shard_elements()
};

struct UnitParameters {
  std::string name;
  std::vector<int64_t> numels;
};

// Units in order; units without parameters are dropped. Throws std::invalid_argument for a
// world size below 1 or a negative count.
ShardLayout make_shard_layout(const std::vector<UnitParameters>& units, int world_size);

// What a rank holds once a step is done (its memory_rank<r>.json), in bytes:
//   stage 1: every parameter (padded buffers) and gradient (unpadded, as backward made them),
//            the optimizer state of its shard;
//   stage 2: every parameter, the gradient and optimizer state of its shard;
//   stage 3: its shard of each (a unit's whole parameters only while gathered).
struct ShardMemory {
  int64_t parameter_bytes = 0;
  int64_t gradient_bytes = 0;
  int64_t optimizer_state_bytes = 0;
};
// `states_per_element`: the optimizer's state tensors per parameter (AdamW 2, SGD with
// momentum 1, plain SGD 0).
ShardMemory sharded_memory(const ShardLayout& layout, ZeroStage stage, int64_t element_bytes,
                           int states_per_element);

// Bytes one rank sends in one iteration under ring algorithms (nccl-tests' accounting):
// all-reduce of B bytes 2 (N-1)/N B, all-gather of a shard of b bytes (N-1) b, reduce-scatter of
// B bytes (N-1)/N B. Stage 1: the gradients all-reduced (unpadded, DDP's buckets), the updated
// shards all-gathered; stage 2: gradients reduce-scattered, shards all-gathered; stage 3: each
// unit all-gathered before its forward and again before its backward, gradients
// reduce-scattered -- 3 (N-1)/N of the padded parameter bytes against DDP's 2 (N-1)/N. Without
// `reshard_after_forward` (a pipeline stage's replicas, baselines/sharded/replica_shards.h)
// stage 3 gathers once per iteration: stage 2's bytes.
struct ShardTraffic {
  double all_reduce_bytes = 0;
  double all_gather_bytes = 0;
  double reduce_scatter_bytes = 0;
  double total() const { return all_reduce_bytes + all_gather_bytes + reduce_scatter_bytes; }
};
ShardTraffic sharded_traffic(const ShardLayout& layout, ZeroStage stage, int64_t element_bytes,
                             bool reshard_after_forward = true);

}  // namespace baselines
