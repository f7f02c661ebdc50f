#include "runtime/models/model_catalog.h"

#include <sstream>
#include <stdexcept>
#include <utility>

namespace runtime {

const std::vector<ModelEntry>& model_catalog() {
  static const std::vector<ModelEntry> catalog = {
      {"resnet50", "torchvision ResNet-50 (Bottleneck, V1.5)", {3, 224, 224}},
      {"resnet18", "torchvision ResNet-18 (BasicBlock)", {3, 224, 224}},
      {"vgg19", "torchvision VGG-19 (configuration E, no BatchNorm)", {3, 224, 224}},
      {"bert",
       "BERT-style encoder (12 layers x 768 by default; model.depth, model.width)",
       {128},
       true},
      {"bert_moe",
       "BERT-style encoder, every other feed-forward a mixture of 4 experts (top-2, capacity 1.25; "
       "model.experts, top_k, capacity_factor, moe_every)",
       {128},
       true},
      {"vit",
       "ViT-style encoder (ViT-B/16: 12 pre-LayerNorm layers x 768 by default; model.depth, "
       "model.width): 16 x 16 patches, a class token, learned positions",
       {3, 224, 224}},
      {"vit_moe",
       "ViT-style encoder, every other feed-forward a mixture of 4 experts (top-2, capacity 1.25; "
       "model.experts, top_k, capacity_factor, moe_every)",
       {3, 224, 224}},
      {"mlp", "3-layer MLP (in->256->256->classes), no BatchNorm", {64}},
      {"llama",
       "Llama-style decoder (2 blocks x 512 by default; model.depth, model.width): RMSNorm, "
       "rotary embeddings, SwiGLU, causal attention, next-token logits over 32000 tokens",
       {128},
       true},
  };
  return catalog;
}

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const auto& entry : model_catalog()) names.push_back(entry.name);
  return names;
}

const ModelEntry* find_model(const std::string& name) {
  for (const auto& entry : model_catalog()) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

bool is_mixture_of_experts(const std::string& name) {
  return name == "bert_moe" || name == "vit_moe";
}

std::string moe_flag_text(const MoeShape& moe) {
  std::ostringstream text;
  text.precision(17);
  text << moe.experts << "," << moe.top_k << "," << moe.capacity_factor << "," << moe.every;
  return text.str();
}

std::string decoder_flag_text(const DecoderShape& decoder) {
  return std::to_string(decoder.heads) + "," + std::to_string(decoder.kv_heads) + "," +
         std::to_string(decoder.vocab);
}

DecoderShape parse_decoder_flag(const std::string& text) {
  DecoderShape decoder;
  std::istringstream in(text);
  char c1 = 0, c2 = 0;
  if (!(in >> decoder.heads >> c1 >> decoder.kv_heads >> c2 >> decoder.vocab) || c1 != ',' ||
      c2 != ',' || !(in >> std::ws).eof()) {
    throw std::invalid_argument("--decoder '" + text +
                                "': expected HEADS,KV_HEADS,VOCAB (e.g. 8,2,32000; 0: default)");
  }
  return decoder;
}

namespace {

// llama's heads, key/value heads and vocabulary against its width.
void check_decoder(const std::string& name, int64_t width, const DecoderShape& decoder) {
  if (name != "llama") {
    if (!(decoder == DecoderShape{})) {
      throw std::invalid_argument(name + " has no heads, kv_heads or vocab (they are llama's)");
    }
    return;
  }
  if (decoder.heads < 0 || decoder.kv_heads < 0 || decoder.vocab < 0) {
    throw std::invalid_argument(name + " heads, kv_heads and vocab must be >= 0");
  }
  // After the width's own checks: a multiple of 64, so that the default heads are >= 1.
  const int64_t model_width = width > 0 ? width : kLlamaDefaultWidth;
  const int64_t heads = decoder.heads > 0 ? decoder.heads : model_width / kLlamaHeadWidth;
  if (model_width % heads != 0 || (model_width / heads) % 2 != 0) {
    throw std::invalid_argument(name + " heads must divide the width " +
                                std::to_string(model_width) +
                                " into even head widths (rotary embeddings rotate pairs)");
  }
  const int64_t kv_heads = decoder.kv_heads > 0 ? decoder.kv_heads : heads;
  if (heads % kv_heads != 0) {
    throw std::invalid_argument(name + " kv_heads must divide the heads (" + std::to_string(heads) +
                                ")");
  }
  if (decoder.vocab != 0 && (decoder.vocab < 2 || decoder.vocab > 1000000)) {
    throw std::invalid_argument(name + " vocab must be in [2, 1000000]");
  }
}

}  // namespace

MoeShape parse_moe_flag(const std::string& text) {
  MoeShape moe;
  std::istringstream in(text);
  char c1 = 0, c2 = 0, c3 = 0;
  if (!(in >> moe.experts >> c1 >> moe.top_k >> c2 >> moe.capacity_factor >> c3 >> moe.every) ||
      c1 != ',' || c2 != ',' || c3 != ',' || !(in >> std::ws).eof()) {
    throw std::invalid_argument(
        "--moe '" + text + "': expected EXPERTS,TOP_K,CAPACITY_FACTOR,EVERY (e.g. 4,2,1.25,2)");
  }
  return moe;
}

bool has_transformer_blocks(const std::string& name) {
  return name == "llama" || name == "bert" || name == "bert_moe";
}

bool is_vision_transformer(const std::string& name) { return name == "vit" || name == "vit_moe"; }

bool has_spmd_graph(const std::string& name) {
  return has_transformer_blocks(name) || is_vision_transformer(name);
}

std::vector<bool> recomputed_layers(const std::string& name, int64_t depth, const MoeShape& moe,
                                    int64_t every) {
  if (!has_transformer_blocks(name)) return {};
  const int64_t blocks = transformer_depth(name, depth);
  std::vector<bool> chain{false};  // the embeddings
  int64_t recomputable = 0;
  for (int64_t i = 0; i < blocks; ++i) {
    const bool can = name != "bert_moe" || (i + 1) % moe.every != 0;
    chain.push_back(can && recomputable++ % every == 0);
  }
  chain.insert(chain.end(), {false, false});  // norm and head; pooler and classifier
  return chain;
}

int64_t transformer_width(const std::string& name, int64_t width) {
  return width > 0 ? width : (name == "llama" ? kLlamaDefaultWidth : 768);
}

int64_t transformer_depth(const std::string& name, int64_t depth) {
  return depth > 0 ? depth : (name == "llama" ? kLlamaDefaultDepth : 12);
}

int64_t llama_feed_forward_width(int64_t width) {
  const int64_t hidden = 2 * (4 * width) / 3;
  return (hidden + 255) / 256 * 256;
}

std::string tensor_split_problem(const std::string& name, const std::vector<int64_t>& input_shape,
                                 int64_t width, const DecoderShape& decoder, int64_t degree,
                                 bool sequence_parallel) {
  if (name != "llama" && name != "bert") {
    return "tensor parallelism splits llama's and bert's layers, not " + name + "'s";
  }
  const bool llama = name == "llama";
  const int64_t w = transformer_width(name, width);
  const int64_t heads = llama && decoder.heads > 0 ? decoder.heads : w / kLlamaHeadWidth;
  const std::pair<const char*, int64_t> counts[] = {
      {"heads", heads},
      {"key/value heads", llama && decoder.kv_heads > 0 ? decoder.kv_heads : heads},
      {"feed-forward width", llama ? llama_feed_forward_width(w) : 4 * w},
      {"tokens", sequence_parallel && !input_shape.empty() ? input_shape[0] : degree}};
  for (const auto& [what, count] : counts) {
    if (count % degree != 0) {
      return "its " + std::string(what) + " (" + std::to_string(count) +
             ") do not split over a tensor axis of " + std::to_string(degree);
    }
  }
  return "";
}

std::string vocabulary_split_problem(const std::string& name, const DecoderShape& decoder,
                                     int64_t degree, const std::string& loss) {
  if (name != "llama")
    return "vocabulary parallelism splits llama's embedding and head, not " + name + "'s";
  const int64_t vocabulary = decoder.vocab > 0 ? decoder.vocab : kLlamaVocabulary;
  if (vocabulary % degree != 0) {
    return "its vocabulary (" + std::to_string(vocabulary) +
           ") does not split over a tensor axis of " + std::to_string(degree);
  }
  if (loss != "cross_entropy") {
    return "vocabulary parallelism computes cross_entropy over the logits' shards, not " + loss;
  }
  return "";
}

void check_model_options(const std::string& name, const std::vector<int64_t>& input_shape,
                         int64_t depth, int64_t width, const MoeShape& moe,
                         const DecoderShape& decoder) {
  if (!find_model(name)) throw std::invalid_argument("unknown model '" + name + "'");
  const std::vector<int64_t>& shape = input_shape;
  const bool resnet = name == "resnet50" || name == "resnet18";
  if ((resnet || name == "vgg19") && shape.size() != 3) {
    throw std::invalid_argument(std::string(resnet ? "resnet" : "vgg19") +
                                " input_shape must be [channels, height, width]");
  }
  const bool bert = name == "bert" || name == "bert_moe";
  const bool vit = is_vision_transformer(name);
  const bool tokens = bert || name == "llama";
  if (tokens && shape.size() != 1) {
    throw std::invalid_argument(name + " input_shape must be [sequence_length]");
  }
  if (vit && (shape.size() != 3 || shape[1] % kVitPatch != 0 || shape[2] % kVitPatch != 0)) {
    throw std::invalid_argument(name +
                                " input_shape must be [channels, height, width], height and width "
                                "multiples of " +
                                std::to_string(kVitPatch) + " (its patches)");
  }
  double elements = 1;
  for (int64_t d : shape) elements *= static_cast<double>(d);
  if (elements > static_cast<double>(int64_t{1} << 26)) {
    throw std::invalid_argument(name + " input_shape has more than 2^26 elements per sample");
  }
  if (resnet && (depth > 0 || width > 0)) {
    throw std::invalid_argument(name + " has no depth or width option");
  }
  if (name == "vgg19" && depth > 0) {
    throw std::invalid_argument("vgg19 has no depth option (it is 19)");
  }
  if ((tokens || vit) && width > 0 && width % 64 != 0) {
    throw std::invalid_argument(name + " width must be a multiple of 64 (heads of 64)");
  }
  if (width > 65536) throw std::invalid_argument(name + " width is at most 65536");
  if (depth > 1024) throw std::invalid_argument(name + " depth is at most 1024");
  check_decoder(name, width, decoder);
  if (!is_mixture_of_experts(name)) {
    if (!(moe == MoeShape{})) {
      throw std::invalid_argument(name +
                                  " has no mixture of experts (experts, top_k, "
                                  "capacity_factor, moe_every are bert_moe's and vit_moe's)");
    }
    return;
  }
  if (moe.experts < 1 || moe.experts > 1024) {
    throw std::invalid_argument(name + " experts must be in [1, 1024]");
  }
  if (moe.top_k < 1 || moe.top_k > moe.experts) {
    throw std::invalid_argument(name + " top_k must be in [1, experts]");
  }
  if (!(moe.capacity_factor > 0) || moe.capacity_factor > 1024) {
    throw std::invalid_argument(name + " capacity_factor must be in (0, 1024]");
  }
  if (moe.every < 1) throw std::invalid_argument(name + " moe_every must be at least 1");
}

}  // namespace runtime
