// What a transformer block split by a tensor axis waits in (Megatron-LM's collectives; the
// runtime's are runtime/parallel/tensor_region.h), priced on its tensor group as the ranks'
// compute streams meet them: the one description both the tensor-parallel system and pipeline
// stages with a tensor axis build their blocks from.
#pragma once

#include <vector>

#include "simulator/layer_costs.h"
#include "simulator/task_graph.h"

namespace harness::simulator {

// The layers a tensor axis splits: the profile's transformer blocks (DecoderLayer,
// EncoderLayer), by their descriptions.
std::vector<bool> split_layers(const LayerCosts& costs);

// Where the profile's split blocks are, by layer index: whether split, the block's index among
// them in model order (the first of each `recompute_every` is recomputed), and the first and
// last block (where sequence parallelism shards and rejoins the tokens; -1: none).
struct SplitBlocks {
  std::vector<bool> split;
  std::vector<int> index;
  int first = -1, last = -1;
  explicit SplitBlocks(const LayerCosts& costs);
};

// How a group's split blocks talk: sequence parallelism, and (under it) the norms' partial
// gradients all-reduced in each block's backward, `partial_vectors` of `partial_bytes` each.
struct SplitBlockComm {
  bool sequence_parallel = false;
  int partial_vectors = 0;
  double partial_bytes = 0;
  // Under sequence parallelism, Megatron's gathering of the two entries' token shards again in
  // backward (`recompute_gather`): two more all-gathers of the block's output a backward.
  bool recompute_gather = false;
};

// Megatron's pair after a split block's forward or its backward, of the block's output
// (`bytes`): two all-reduces, or under sequence parallelism an all-gather and a reduce-scatter
// each. Returns the last.
int add_megatron_pair(TaskGraph& graph, int group, double bytes, bool sequence_parallel);

// A split block's forward collectives: the pair, and where it is the model's last split block
// under sequence parallelism the tokens' all-gather that rejoins the sequence.
int add_split_forward(TaskGraph& graph, int group, double bytes, const SplitBlockComm& comm,
                      bool last_split);

// The collectives of its backward that carry the input's gradient: the entries gathered again
// where the comm says so, the pair, and where it is the model's first split block under sequence
// parallelism the tokens' gradient gathered.
int add_split_backward_input(TaskGraph& graph, int group, double bytes, const SplitBlockComm& comm,
                             bool first_split);

// The ones that carry weight gradients: under sequence parallelism the norms' partial gradients;
// -1 where there are none.
int add_split_backward_weight(TaskGraph& graph, int group, const SplitBlockComm& comm);

}  // namespace harness::simulator
