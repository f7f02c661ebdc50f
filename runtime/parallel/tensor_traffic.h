// What a rank of a tensor-parallel group sends per iteration, by ring accounting (nccl-tests'
// bus bytes, as runtime::ring_bytes_sent counts them): Megatron-LM's 4 all-reduces of
// batch x tokens x width elements per transformer layer (two forward, after the attention's and
// the feed-forward's row-parallel projections; two backward, before their column-parallel
// ones), or under sequence parallelism 4 all-gathers and 4 reduce-scatters of the same tensor
// (Korthikanti et al., 2022, section 4.2.2), which send the same bytes. Torch-free: the
// simulator prices it, the rank reports it beside what it counted.
#pragma once

#include <cstdint>
#include <string>

namespace runtime {

struct TensorTrafficShape {
  int64_t batch = 0;   // samples of the micro-batch
  int64_t tokens = 0;  // sequence length
  int64_t width = 0;   // the hidden size
  int64_t layers = 0;  // transformer blocks split over the axis
  int degree = 1;      // ranks on the tensor axis
  bool sequence_parallel = false;
  int64_t element_size = 4;  // bytes of an activation
  // Width-sized parameters per layer whose gradients are partial under sequence parallelism:
  // llama's 2 norm scales; bert's 2 LayerNorms' scales and shifts and its 2 row-parallel biases.
  int64_t partial_vectors = 2;
  // A pipeline stage's share: how many of the split layers' two ends (the first split layer,
  // the last) it holds, and the micro-batches it runs (each accumulates the partial gradients,
  // and all-reduces them); `batch` is then the rows of all of them.
  int ends = 2;
  int64_t micro_batches = 1;
  // The token embedding and the head split by vocabulary rows (runtime/parallel/
  // vocabulary_parallel.h), which takes the place of the ends' all-gathers.
  bool vocabulary_parallel = false;
  // Sequence parallelism gathering the split blocks' inputs again in backward: one all-gather
  // more per block entry, 2 ring passes of b s h per layer.
  bool recompute_gather = false;
};

// The width-sized parameters per transformer block whose gradients are partial under sequence
// parallelism (TensorTrafficShape::partial_vectors): bert's 6, llama's 2.
int64_t partial_vectors_of(const std::string& model);

// Per layer per micro-batch: 8 (t - 1) / t x b s h x bytes, with or without sequence
// parallelism; 10 where sequence parallelism gathers again in backward.
double tensor_layer_bytes_sent(const TensorTrafficShape& shape);

// Per iteration: the layers' bytes; under sequence parallelism also the all-gathers where the
// split layers end (forward) and begin (backward), (t - 1) / t x b s h each of the `ends` held,
// and the all-reduce of the partial gradients, `partial_vectors` per layer of `width` elements
// (their bytes `gradient_element_size` each) per micro-batch. With the vocabulary split, the
// embedding's g and the head's f instead of the ends (an all-reduce each, or under sequence
// parallelism a reduce-scatter and an all-gather each: 4 ring passes of b s h in all), the final
// norm's partial gradient under sequence parallelism, and the loss's collectives in float32 (or
// the activations' wider type), 4 bytes a number: an all-gather of one number a token,
// (t - 1) x b s x 4, and two all-reduces of one, 2 (t - 1) / t x b s x 4 each.
double tensor_iteration_bytes_sent(const TensorTrafficShape& shape,
                                   int64_t gradient_element_size = 4);

}  // namespace runtime
