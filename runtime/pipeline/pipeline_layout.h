// Which layers and samples each rank of a pipeline owns. A plan is a list of stages of
// contiguous layers; stage s runs on ranks[s] (its replicas), which split every micro-batch
// among themselves by contiguous sample ranges: replica j of r holds samples
// [floor(j*B/r), floor((j+1)*B/r)) of a micro-batch of B samples.
//
// Between stage s (r replicas) and stage s+1 (r' replicas) activations flow by sample: every
// pair (j, k) whose ranges overlap exchanges exactly the overlapping samples -- replica j
// sends rows [max(a_j, a'_k), min(b_j, b'_k)) of its output to replica k, and k sends the
// gradients of those rows back. With r == r' that is replica j <-> replica j; with r' = 1 the
// next stage gathers every replica's rows in order. Torch-free: the harness validates plans
// with it and tests check the mapping by hand.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace runtime {

struct StageAssignment {
  int first_layer = 0;  // inclusive indexes into the model's layer chain
  int last_layer = 0;
  std::vector<int> ranks;  // the stage's replicas, in replica order
  bool operator==(const StageAssignment&) const = default;
};

// A rank may serve several stages (interleaved schedules, ZB-V), always with the same replicas:
// the ranks serving the same stages form one pipeline position, numbered by their first stage.
struct PipelineLayout {
  std::vector<StageAssignment> stages;

  int stage_count() const { return static_cast<int>(stages.size()); }
  // The first stage `rank` serves and its replica index there; throws if the rank serves none.
  int stage_of(int rank) const;
  int replica_of(int rank) const;
  // Every stage `rank` serves, in model order.
  std::vector<int> stages_of(int rank) const;
  // The pipeline position of each stage, and how many positions there are.
  std::vector<int> stage_positions() const;
  int position_count() const;
};

// Throws std::invalid_argument (a sentence naming the stage) unless the stages cover layers
// 0..layer_count-1 in order without gaps or overlaps, every rank 0..world_size-1 serves a stage,
// and a rank serving several serves them all with the same replicas.
void validate_layout(const PipelineLayout& layout, int layer_count, int world_size);

struct SampleRange {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
  bool operator==(const SampleRange&) const = default;
};

// Samples of micro-batch m of a global batch split into `micro_batches` contiguous parts.
SampleRange micro_batch_samples(int64_t global_batch, int micro_batches, int m);

// Rows of a micro-batch of `samples` rows that replica `replica` of `replicas` holds.
SampleRange replica_samples(int64_t samples, int replicas, int replica);

struct SliceTransfer {
  int source_replica = 0;
  int destination_replica = 0;
  SampleRange rows;  // rows of the micro-batch
  bool operator==(const SliceTransfer&) const = default;
};

// Every (source, destination) pair with overlapping rows, ordered by rows.
std::vector<SliceTransfer> slice_transfers(int64_t samples, int source_replicas,
                                           int destination_replicas);

// "0-12" -> {0, 12}; "7" -> {7, 7}; throws std::invalid_argument on anything else.
std::pair<int, int> parse_layer_range(const std::string& text);

}  // namespace runtime
