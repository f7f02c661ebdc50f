// The operator graphs of the zoo's transformers (runtime/models: llama, bert, bert_moe, vit,
// vit_moe), built from their shapes alone: what HiDup's search reads from a traced model, here
// from the same sizes the zoo builds its layers with.
//   decoder (llama):  tokens, embedding, per block [norm, qkv, attention, output, add, norm,
//                     gate_up, swiglu, down, add], norm, lm_head, loss
//   encoder (bert):   tokens, embeddings, their norm, per block [qkv, attention, output, add,
//                     norm, fc1, gelu, fc2 (or one mixture of experts), add, norm], pooler, its
//                     tanh, classifier, loss
//   vision (vit):     patches, their projection, the class token and positions, per block
//                     [norm, qkv, attention, output, add, norm, fc1, gelu, fc2 (or a mixture),
//                     add], the head's norm, its classifier of the class token, loss
// A nonlinear step (a norm, a tanh) is an operator of its own: none runs on partial sums.
#pragma once

#include <cstdint>

#include "planner/spmd/operator_graph.h"

namespace harness::spmd {

enum class TransformerFamily { kDecoder, kEncoder, kVision };

struct TransformerShape {
  TransformerFamily family = TransformerFamily::kDecoder;
  int64_t batch = 1;         // the global batch, in sequences
  int64_t tokens = 1;        // per sequence (vision: the patches and the class token)
  int64_t patch_pixels = 1;  // vision: the values of one patch (channels x 16 x 16)
  int64_t width = 1;
  int64_t depth = 1;
  int64_t heads = 1;
  int64_t kv_heads = 1;
  int64_t feed_forward = 1;  // the hidden width of a block's feed-forward (SwiGLU's: one half)
  int64_t vocabulary = 1;
  int64_t classes = 2;  // the encoder's and vision's classifier
  // A mixture of experts in every `moe_every`-th encoder block (0 experts: none).
  int64_t experts = 0;
  int64_t top_k = 1;
  double capacity_factor = 1.25;
  int64_t moe_every = 2;
  double bytes_per_element = 4;
};

// Throws std::invalid_argument for a shape with a non-positive size.
OperatorGraph transformer_graph(const TransformerShape& shape, int ranks);

}  // namespace harness::spmd
