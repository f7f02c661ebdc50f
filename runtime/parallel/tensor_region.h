// Megatron-LM's tensor parallelism as four autograd operations on a group of ranks that split
// each layer: a column-parallel block (q, k, v; SwiGLU's gate and up) is entered through
// `enter_tensor_region` and a row-parallel one (the attention's output projection, the
// feed-forward's down projection) left through `leave_tensor_region`. Without sequence
// parallelism they are Megatron's f and g: identity forward and all-reduce backward, then
// all-reduce forward and identity backward. With it (Korthikanti et al., 2022) activations
// outside the blocks are sharded along the sequence (dimension 1 of [batch, tokens, width]),
// and the pair becomes an all-gather forward with a reduce-scatter backward, then a
// reduce-scatter forward with an all-gather backward; `split_sequence` and `gather_sequence`
// shard and rejoin the sequence where the split layers begin and end.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/comm/communicator.h"
#include "runtime/protocol/trace_recorder.h"

namespace runtime {

// Where a rank sits on the tensor axis and the group it splits layers with. A model built with
// a degree above 1 holds one and hands it to its split layers; the rank sets `group` (and
// `trace`) before the first forward.
struct TensorRegion {
  int index = 0;   // this rank's slice: heads [index x heads / degree, ...)
  int degree = 1;  // ranks that split each layer
  bool sequence_parallel = false;
  // Sequence parallelism keeping only each rank's token shard of the split blocks' inputs
  // (gathered_projections); false keeps the gathered copy the projections read.
  bool regathers = false;
  Communicator* group = nullptr;  // degree ranks, this rank's rank in it is `index`
  TraceRecorder* trace = nullptr;
  // How many parameters' gradients are partial sums over the sequence shards (norms and the
  // biases added after a reduce-scatter, under sequence parallelism): add_partial_parameter.
  int64_t partial_parameters = 0;

  // count / degree; std::invalid_argument naming `what` when degree does not divide it.
  int64_t share_of(int64_t count, const std::string& what) const;
};

// The region of rank `index` of `degree` (its group set later); null for a degree of 1.
// `regathers` takes effect under sequence parallelism only.
std::shared_ptr<TensorRegion> make_tensor_region(int64_t index, int64_t degree,
                                                 bool sequence_parallel, bool regathers = false);

// f: before a column-parallel block (see the header's comment).
at::Tensor enter_tensor_region(TensorRegion& region, const at::Tensor& input);
// g: after a row-parallel block, whose output is this rank's partial sum.
at::Tensor leave_tensor_region(TensorRegion& region, const at::Tensor& partial);
// Sequence parallelism's boundaries: this rank's tokens of a whole (replicated) activation,
// the gradient gathered back; and the whole sequence from the shards, the gradient sliced.
at::Tensor split_sequence(TensorRegion& region, const at::Tensor& whole);
at::Tensor gather_sequence(TensorRegion& region, const at::Tensor& shard);

// Sequence parallelism as Megatron-LM runs it, keeping only its shards: the column-parallel
// projections a split block begins with (q, k, v; the feed-forward's first) applied to this
// rank's token shard as one operation. Forward all-gathers the tokens and applies each; only
// the shard is kept for backward, which all-gathers it again for the weights' gradients and
// reduce-scatters the input's. In place of enter_tensor_region and the projections: the
// bytes of one more all-gather per block entry, for the gathered input's memory.
struct Projection {
  at::Tensor weight;  // [out, in]: this rank's rows
  at::Tensor bias;    // undefined where the projection has none
};
std::vector<at::Tensor> gathered_projections(TensorRegion& region, const at::Tensor& shard,
                                             const std::vector<Projection>& projections);
// The column-parallel projections a split block begins with, of x: whole layers where there is
// no region, after Megatron's f (enter_tensor_region), or gathered_projections where the region
// regathers. What every split model calls.
std::vector<at::Tensor> column_projections(TensorRegion* region, const at::Tensor& x,
                                           const std::vector<Projection>& projections);

// A parameter that sees only this rank's tokens (sequence parallelism): its gradient is summed
// over the group as backward makes it, by a hook that runs before the gradient is accumulated,
// so that whatever sums or shards gradients across replicas afterwards (DDP's reducer, ZeRO's
// reduce-scatter) takes the whole. The region must outlive the parameter's graphs.
void add_partial_parameter(TensorRegion& region, at::Tensor& parameter);

// The rows [index x rows / degree, ...) of a column-parallel weight (or bias), or the columns
// of a row-parallel one, as a tensor of its own (the whole is freed with its owner).
at::Tensor column_shard(const TensorRegion& region, const at::Tensor& weight);
at::Tensor row_shard(const TensorRegion& region, const at::Tensor& weight);
// Of a weight whose rows are `groups` equal parts side by side (BERT's fused q, k, v), each
// part's column shard, concatenated.
at::Tensor grouped_column_shard(const TensorRegion& region, const at::Tensor& weight,
                                int64_t groups);

}  // namespace runtime
