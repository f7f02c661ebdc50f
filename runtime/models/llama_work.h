// What each layer of a Llama-style decoder does, from its shapes alone: the FLOPs of its matrix
// products (counted as runtime/models/flop_count.h counts LibTorch's, 2 x m x n x k a product,
// the attention's two batched products whole), the bytes its element-wise work moves, the
// parameters it holds and the elements of its output. For slice 0 of a tensor axis of t ranks
// (Megatron's split, as the zoo's model splits itself): the heads and feed-forward columns over
// t; the norms, the residual adds, the embedding and the head whole, or under sequence
// parallelism the norms and adds on 1/t of the tokens, and with the vocabulary split the
// embedding's and the head's rows over t. Torch-free: `harness
// profile estimate` prices it on devices the harness does not run on (a test holds it to the
// zoo's model and the FLOP counter).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace runtime {

// A decoder's shape as published (Llama-2 7B: 32 blocks of width 4096, 32 heads, feed-forward
// 11008, vocabulary 32000, 4096 tokens).
struct LlamaDimensions {
  int64_t depth = 0;
  int64_t width = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;
  int64_t feed_forward = 0;
  int64_t vocab = 0;
  int64_t tokens = 0;
};

struct LayerWork {
  std::string name;  // the zoo's chain names and kinds: embed_tokens, layers.i, norm, lm_head
  std::string kind;
  double forward_flops = 0;    // the batch's matrix products
  double attention_flops = 0;  // of which the attention core's (selective recomputation's)
  // Element-wise bytes of the forward: each operation outside the matrix
  // products reads its inputs and writes its output once; the attention core is one fused
  // kernel (FlashAttention's), reading q, k, v and writing its output; the loss reads and
  // writes the float32 logits.
  double forward_bytes = 0;
  // What its backward moves beyond twice the forward's: the embedding's dense table gradient.
  double backward_extra_bytes = 0;
  int64_t parameters = 0;
  int64_t output_elements = 0;  // the batch's
  // What its forward keeps for its backward (float32 logits): a block its
  // norms' inputs (on token shards under sequence parallelism), the column-parallel projections'
  // gathered inputs, q, k, v and the attention's output, and the SwiGLU's gate, up, activated
  // gate and product; the fused attention core no scores. `recomputed_bytes`: what it keeps when
  // it recomputes in backward (full activation checkpointing: its input alone).
  double stored_bytes = 0;
  double recomputed_bytes = 0;
  // What a zero-bubble stage's I leaves for its W: the gradient of each weighted operator's
  // output (a block's q, k, v, gate and up on its heads' share, o's and down's whole, the norms'
  // on token shards under sequence parallelism; the head's float32 logits'); the embedding's
  // backward is all W.
  double weight_pending_bytes = 0;
};

// What stops `tensor` ranks from splitting the decoder (the heads, key/value heads or
// feed-forward width not divisible), or a shape that is no decoder (a dimension below 1, heads
// not dividing the width, key/value heads not dividing the heads); "" where nothing does.
std::string llama_work_problem(const LlamaDimensions& dims, int64_t tensor);

// How a tensor axis splits the decoder: its degree, sequence parallelism (Korthikanti et al.'s)
// and the vocabulary split (Megatron's vocabulary-parallel embedding, head and loss).
struct LlamaSplit {
  int64_t tensor = 1;
  bool sequence_parallel = false;
  bool vocabulary_parallel = false;
};

// Every chain layer's work at `batch` samples, slice 0 of the split, its activations of
// `element_bytes` (2: 16-bit; 4: float32). Throws std::invalid_argument with
// llama_work_problem's reason, or where the vocabulary does not split over the degree.
std::vector<LayerWork> llama_layer_work(const LlamaDimensions& dims, int64_t batch,
                                        const LlamaSplit& split, double element_bytes = 2);

}  // namespace runtime
