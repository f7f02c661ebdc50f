// The zoo's catalog: which models exist, what they are, their default input. Torch-free, so
// the harness validates `model.name` without loading LibTorch (building a model, counting its
// layers or parameters, is the rank program's: runtime/models/model_zoo.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace runtime {

// A mixture-of-experts model's shape (bert_moe, vit_moe; spec keys model.experts, model.top_k,
// model.capacity_factor, model.moe_every): `experts` experts per mixture, each token to its
// `top_k` (1: Switch, 2: GShard), an expert taking ceil(capacity_factor x tokens x top_k /
// experts) tokens, a mixture in every `every`-th encoder layer (2: the 2nd, 4th, ...).
struct MoeShape {
  int64_t experts = 4;
  int64_t top_k = 2;
  double capacity_factor = 1.25;
  int64_t every = 2;
  bool operator==(const MoeShape&) const = default;
};

// llama's defaults (runtime/models/llama.h) where ModelOptions leaves them 0: 2 blocks of width
// 512, heads of 64, a vocabulary of 32000 (Llama's). Here, torch-free, for the one rule below.
inline constexpr int64_t kLlamaDefaultDepth = 2;
inline constexpr int64_t kLlamaDefaultWidth = 512;
inline constexpr int64_t kLlamaHeadWidth = 64;
inline constexpr int64_t kLlamaVocabulary = 32000;
// BERT's (bert and bert_moe) WordPiece vocabulary.
inline constexpr int64_t kBertVocabulary = 30522;

// A Llama-style decoder's heads (model.heads; 0: width / 64), key/value heads (model.kv_heads;
// 0: as many as heads, fewer is grouped-query attention) and vocabulary (model.vocab; 0: 32000).
struct DecoderShape {
  int64_t heads = 0;
  int64_t kv_heads = 0;
  int64_t vocab = 0;
  bool operator==(const DecoderShape&) const = default;
};

// Whether the model is built of transformer blocks that activation checkpointing recomputes
// (llama, bert, and bert_moe's blocks without a mixture).
bool has_transformer_blocks(const std::string& name);

// ViT's (vit, vit_moe): images cut into square patches of this side, each a token.
inline constexpr int64_t kVitPatch = 16;
bool is_vision_transformer(const std::string& name);

// Whether HiDup's search has the model's operator graph and `kind: spmd` runs it (llama, bert,
// bert_moe, vit, vit_moe: planner/spmd/transformer_graph.h).
bool has_spmd_graph(const std::string& name);

// Which layers of the model's chain full activation checkpointing recomputes, in chain order
// (the zoo's, which a test holds this to): the blocks between the embeddings and the last two
// layers, not bert_moe's mixtures; with `every` k, the first of each k of those blocks (blocks
// 0, k, 2k, ... of the recomputable ones). Empty for other models.
std::vector<bool> recomputed_layers(const std::string& name, int64_t depth, const MoeShape& moe,
                                    int64_t every = 1);

// A transformer's width and blocks as built for a spec's `width` and `depth` (0: the model's
// defaults: llama 512 and 2, bert and bert_moe 768 and 12).
int64_t transformer_width(const std::string& name, int64_t width);
int64_t transformer_depth(const std::string& name, int64_t depth);

// The SwiGLU hidden width Llama uses for a model width: 2/3 of 4 x width, rounded up to a
// multiple of 256.
int64_t llama_feed_forward_width(int64_t width);

// What stops `degree` ranks from splitting llama's or bert's layers (tensor parallelism): another
// model, its heads, its key/value heads or its feed-forward width not divisible by the degree,
// or, with `sequence_parallel`, its tokens; "" where nothing does. `width` and `decoder` as the
// spec gives them (0: the defaults).
std::string tensor_split_problem(const std::string& name, const std::vector<int64_t>& input_shape,
                                 int64_t width, const DecoderShape& decoder, int64_t degree,
                                 bool sequence_parallel);

// What stops `degree` ranks from splitting llama's token embedding and head by vocabulary rows:
// another model, a vocabulary (`decoder.vocab`, 0: Llama's) not divisible by the degree, or a
// loss other than cross entropy (the head's logits are shards); "" where nothing does.
std::string vocabulary_split_problem(const std::string& name, const DecoderShape& decoder,
                                     int64_t degree, const std::string& loss);

struct ModelEntry {
  std::string name;
  std::string description;
  std::vector<int64_t> default_input_shape;
  bool reads_tokens = false;  // input_shape is [tokens]: the tables add tokens/s
};

const std::vector<ModelEntry>& model_catalog();
std::vector<std::string> model_names();
// The catalog's entry for `name`, or nullptr.
const ModelEntry* find_model(const std::string& name);

// The zoo's rules for a model's options, checked without building it (the zoo applies them
// before it builds a model; the harness when it reads a spec): the input shape's rank, which
// models take depth and width, BERT's width in heads of 64, and sizes a CPU process can hold
// (at most 2^26 input elements per sample, width 65536, depth 1024). Throws
// std::invalid_argument with the reason. A mixture's shape only for bert_moe: 1 <= top_k <=
// experts <= 1024, capacity_factor > 0, every >= 1.
// A decoder's shape only for llama: heads divide the width into even head widths, kv_heads
// divide the heads, a vocabulary of 2..1,000,000 tokens.
void check_model_options(const std::string& name, const std::vector<int64_t>& input_shape,
                         int64_t depth, int64_t width, const MoeShape& moe = {},
                         const DecoderShape& decoder = {});

// Whether `name` has mixture-of-experts layers (and takes a MoeShape).
bool is_mixture_of_experts(const std::string& name);

// The rank program's --moe value, "EXPERTS,TOP_K,CAPACITY_FACTOR,EVERY" ("4,2,1.25,2"), and
// back (std::invalid_argument for text of another form; values are checked where the model is).
std::string moe_flag_text(const MoeShape& moe);
MoeShape parse_moe_flag(const std::string& text);

// The rank program's --decoder value, "HEADS,KV_HEADS,VOCAB" ("8,2,32000"; 0 for a default), and
// back (std::invalid_argument for text of another form).
std::string decoder_flag_text(const DecoderShape& decoder);
DecoderShape parse_decoder_flag(const std::string& text);

}  // namespace runtime
