#include "runtime/models/llama_work.h"

#include <stdexcept>
#include <utility>

namespace runtime {

namespace {

constexpr double kLogitBytes = 4;     // the loss's float32 logits
constexpr double kGradientBytes = 4;  // float32 parameter gradients

// One block's slice: q, k, v and o split by heads, the SwiGLU's three projections by columns.
LayerWork block_work(const LlamaDimensions& d, double batch, const LlamaSplit& split,
                     double element) {
  const double t = double(split.tensor);
  const double h = double(d.width), f = double(d.feed_forward), s = double(d.tokens);
  const double kv_width = double(d.kv_heads) * (h / double(d.heads));
  const double rows = batch * s;
  LayerWork w;
  w.kind = "DecoderLayer";
  w.attention_flops = 4 * batch * s * s * h / t;  // scores and weighted values, its heads
  const double projections = 2 * rows * h * (2 * h + 2 * kv_width + 3 * f) / t;
  w.forward_flops = projections + w.attention_flops;
  // Per token: the two norms (2h each) and residual adds (3h each), whole or on the token
  // shard; the split part's rotary embedding of q and k, the fused attention core's q, k, v in
  // and output out, and the SwiGLU's gate, up and product.
  const double norms_and_adds = 2 * 2 * h + 2 * 3 * h;
  const double by_heads = 2 * (h + kv_width) + (2 * h + 2 * kv_width) + 3 * f;
  w.forward_bytes =
      rows * (norms_and_adds / (split.sequence_parallel ? t : 1) + by_heads / t) * element;
  // Per token: the norms' inputs; the two gathered inputs of the column-parallel projections;
  // q, o and k, v; the SwiGLU's four tensors of the feed-forward width.
  const double shard = split.sequence_parallel ? t : 1;
  const double kept = 2 * h / shard + 2 * h + (2 * h + 2 * kv_width + 4 * f) / t;
  w.stored_bytes = rows * kept * element;
  w.recomputed_bytes = rows * h / shard * element;
  w.weight_pending_bytes =
      rows * ((h + 2 * kv_width + 2 * f) / t + 2 * h + 2 * h / shard) * element;
  w.parameters =
      (2 * d.width * d.width + 2 * d.width * int64_t(kv_width) + 3 * d.width * d.feed_forward) /
          split.tensor +
      2 * d.width;
  w.output_elements = int64_t(rows) * d.width;
  return w;
}

LayerWork named(LayerWork w, std::string name, std::string kind) {
  w.name = std::move(name);
  w.kind = std::move(kind);
  return w;
}

}  // namespace

std::string llama_work_problem(const LlamaDimensions& d, int64_t tensor) {
  for (const auto& [what, value] :
       {std::pair{"depth", d.depth}, std::pair{"width", d.width}, std::pair{"heads", d.heads},
        std::pair{"kv_heads", d.kv_heads}, std::pair{"feed_forward", d.feed_forward},
        std::pair{"vocab", d.vocab}, std::pair{"tokens", d.tokens}, std::pair{"tensor", tensor}}) {
    if (value < 1) return std::string(what) + " must be at least 1";
  }
  if (d.width % d.heads != 0) return "the heads do not divide the width";
  if (d.heads % d.kv_heads != 0) return "the key/value heads do not divide the heads";
  for (const auto& [what, count] : {std::pair{"heads", d.heads}, std::pair{"kv_heads", d.kv_heads},
                                    std::pair{"feed_forward", d.feed_forward}}) {
    if (count % tensor != 0) {
      return std::string(what) + " (" + std::to_string(count) +
             ") do not split over a tensor axis of " + std::to_string(tensor);
    }
  }
  return "";
}

std::vector<LayerWork> llama_layer_work(const LlamaDimensions& d, int64_t batch,
                                        const LlamaSplit& split, double element) {
  if (const std::string problem = llama_work_problem(d, split.tensor); !problem.empty()) {
    throw std::invalid_argument(problem);
  }
  if (split.vocabulary_parallel && d.vocab % split.tensor != 0) {
    throw std::invalid_argument("vocab (" + std::to_string(d.vocab) +
                                ") does not split over a tensor axis of " +
                                std::to_string(split.tensor));
  }
  const double rows = double(batch) * double(d.tokens), h = double(d.width);
  // The rows of the vocabulary this slice holds.
  const int64_t vocab = split.vocabulary_parallel ? d.vocab / split.tensor : d.vocab;
  std::vector<LayerWork> chain;
  LayerWork embedding;  // a lookup: every token's row read and written (masked where not held)
  embedding.forward_bytes = rows * 2 * h * element;
  // Its backward writes the whole table's gradient (dense), not only the looked-up rows.
  embedding.backward_extra_bytes = double(vocab) * h * kGradientBytes;
  embedding.parameters = vocab * d.width;
  embedding.output_elements = int64_t(rows) * d.width;
  chain.push_back(named(embedding, "embed_tokens", "Embedding"));
  const LayerWork block = block_work(d, double(batch), split, element);
  for (int64_t i = 0; i < d.depth; ++i) {
    chain.push_back(named(block, "layers." + std::to_string(i), "DecoderLayer"));
  }
  LayerWork norm;
  norm.forward_bytes = rows * 2 * h * element / double(split.sequence_parallel ? split.tensor : 1);
  norm.parameters = d.width;
  norm.output_elements = int64_t(rows) * d.width;
  norm.stored_bytes = norm.forward_bytes / 2;     // its input
  norm.weight_pending_bytes = norm.stored_bytes;  // its output's gradient
  chain.push_back(named(norm, "norm", "RMSNorm"));
  LayerWork head;  // the projection onto the vocabulary, and the loss over its logits
  head.forward_flops = 2 * rows * h * double(vocab);
  head.forward_bytes = rows * 2 * double(vocab) * kLogitBytes;
  head.parameters = vocab * d.width;
  head.output_elements = int64_t(rows) * vocab;
  head.stored_bytes = rows * (h * element + double(vocab) * kLogitBytes);
  head.weight_pending_bytes = rows * double(vocab) * kLogitBytes;
  chain.push_back(named(head, "lm_head", "Linear"));
  return chain;
}

}  // namespace runtime
