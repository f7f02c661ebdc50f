#include "runtime/models/model_zoo.h"

#include <torch/nn.h>

#include <cmath>
#include <optional>
#include <stdexcept>

#include "runtime/models/activation_checkpoint.h"
#include "runtime/models/attention_core.h"
#include "runtime/models/llama.h"
#include "runtime/models/moe.h"
#include "runtime/parallel/tensor_region.h"

namespace runtime {
namespace nn = torch::nn;

torch::Tensor ZooModel::forward_layer(Layer& layer, torch::Tensor input) {
  // Recomputation needs a graph to hang on: an input that carries a gradient.
  if (checkpointing_ && layer.recomputed && torch::GradMode::is_enabled() &&
      input.requires_grad()) {
    return checkpointed_forward(layer.module, input);
  }
  return layer.module.forward(input);
}

torch::Tensor ZooModel::forward(torch::Tensor input) {
  for (auto& layer : layers_) input = forward_layer(layer, input);
  return input;
}

torch::Tensor ZooModel::forward_layers(torch::Tensor input, size_t first, size_t last) {
  for (size_t i = first; i <= last; ++i) input = forward_layer(layers_.at(i), input);
  return input;
}

void set_recomputation(ModelOptions& options, const std::string& activation_checkpointing,
                       int64_t recompute_every) {
  options.activation_checkpointing = activation_checkpointing == "full";
  options.recompute_every = recompute_every;
  options.selective_recomputation = activation_checkpointing == "selective";
}

void ZooModel::set_activation_checkpointing(bool on, int64_t every) {
  checkpointing_ = on;
  int64_t recomputable = 0;
  for (Layer& layer : layers_) layer.recomputed = layer.recomputable && recomputable++ % every == 0;
}

bool ZooModel::has_recomputable_layers() const {
  return std::any_of(layers_.begin(), layers_.end(),
                     [](const Layer& layer) { return layer.recomputable; });
}

namespace {

nn::Conv2d conv(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding,
                bool bias = false) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding).bias(bias));
}

// torchvision's BasicBlock (ResNet-18/34): two 3x3 convolutions.
class BasicBlockImpl : public nn::Module {
 public:
  static constexpr int64_t kExpansion = 1;
  BasicBlockImpl(int64_t in, int64_t planes, int64_t stride) {
    conv1 = register_module("conv1", conv(in, planes, 3, stride, 1));
    bn1 = register_module("bn1", nn::BatchNorm2d(planes));
    conv2 = register_module("conv2", conv(planes, planes, 3, 1, 1));
    bn2 = register_module("bn2", nn::BatchNorm2d(planes));
    if (stride != 1 || in != planes) {
      downsample = register_module(
          "downsample", nn::Sequential(conv(in, planes, 1, stride, 0), nn::BatchNorm2d(planes)));
    }
  }
  torch::Tensor forward(torch::Tensor x) {
    torch::Tensor identity = downsample ? downsample->forward(x) : x;
    torch::Tensor out = torch::relu(bn1->forward(conv1->forward(x)));
    out = bn2->forward(conv2->forward(out));
    return torch::relu(out + identity);
  }
  nn::Conv2d conv1{nullptr}, conv2{nullptr};
  nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  nn::Sequential downsample{nullptr};
};
TORCH_MODULE(BasicBlock);

// torchvision's Bottleneck (ResNet V1.5): the stride sits on the 3x3 convolution.
class BottleneckImpl : public nn::Module {
 public:
  static constexpr int64_t kExpansion = 4;
  BottleneckImpl(int64_t in, int64_t planes, int64_t stride) {
    conv1 = register_module("conv1", conv(in, planes, 1, 1, 0));
    bn1 = register_module("bn1", nn::BatchNorm2d(planes));
    conv2 = register_module("conv2", conv(planes, planes, 3, stride, 1));
    bn2 = register_module("bn2", nn::BatchNorm2d(planes));
    conv3 = register_module("conv3", conv(planes, planes * kExpansion, 1, 1, 0));
    bn3 = register_module("bn3", nn::BatchNorm2d(planes * kExpansion));
    if (stride != 1 || in != planes * kExpansion) {
      downsample =
          register_module("downsample", nn::Sequential(conv(in, planes * kExpansion, 1, stride, 0),
                                                       nn::BatchNorm2d(planes * kExpansion)));
    }
  }
  torch::Tensor forward(torch::Tensor x) {
    torch::Tensor identity = downsample ? downsample->forward(x) : x;
    torch::Tensor out = torch::relu(bn1->forward(conv1->forward(x)));
    out = torch::relu(bn2->forward(conv2->forward(out)));
    out = bn3->forward(conv3->forward(out));
    return torch::relu(out + identity);
  }
  nn::Conv2d conv1{nullptr}, conv2{nullptr}, conv3{nullptr};
  nn::BatchNorm2d bn1{nullptr}, bn2{nullptr}, bn3{nullptr};
  nn::Sequential downsample{nullptr};
};
TORCH_MODULE(Bottleneck);

// Adaptive average pool then flatten: torchvision's `avgpool` plus the flatten its forward()
// does, as one layer of the chain.
class PoolFlattenImpl : public nn::Module {
 public:
  explicit PoolFlattenImpl(int64_t side) : side_(side) {}
  torch::Tensor forward(torch::Tensor x) {
    return torch::adaptive_avg_pool2d(x, {side_, side_}).flatten(1);
  }

 private:
  int64_t side_;
};
TORCH_MODULE(PoolFlatten);

void init_like_torchvision(nn::Module& model) {
  // Kaiming-normal convolutions (fan_out, ReLU), BatchNorm to identity.
  for (auto& module : model.modules(/*include_self=*/false)) {
    if (auto* c = module->as<nn::Conv2d>()) {
      nn::init::kaiming_normal_(c->weight, 0.0, torch::kFanOut, torch::kReLU);
      if (c->bias.defined()) nn::init::zeros_(c->bias);
    } else if (auto* bn = module->as<nn::BatchNorm2d>()) {
      nn::init::ones_(bn->weight);
      nn::init::zeros_(bn->bias);
    }
  }
}

template <typename Block, int64_t Expansion>
class ResNet : public ZooModel {
 public:
  ResNet(const std::vector<int64_t>& blocks, const ModelOptions& options) {
    const int64_t classes = options.num_classes > 0 ? options.num_classes : 1000;
    append_layer("conv1", "Conv2d",
                 register_module("conv1", conv(options.input_shape[0], 64, 7, 2, 3)));
    append_layer("bn1", "BatchNorm2d", register_module("bn1", nn::BatchNorm2d(64)));
    append_layer("relu", "ReLU", register_module("relu", nn::ReLU()));
    append_layer(
        "maxpool", "MaxPool2d",
        register_module("maxpool", nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2).padding(1))));
    const int64_t widths[] = {64, 128, 256, 512};
    int64_t in_planes = 64;
    for (int stage = 0; stage < 4; ++stage) {
      const std::string stage_name = "layer" + std::to_string(stage + 1);
      auto layer = register_module(stage_name, nn::Sequential());
      for (int64_t b = 0; b < blocks[stage]; ++b) {
        const int64_t stride = (stage > 0 && b == 0) ? 2 : 1;
        Block block(in_planes, widths[stage], stride);
        layer->push_back(block);
        append_layer(stage_name + "." + std::to_string(b),
                     Expansion == 4 ? "Bottleneck" : "BasicBlock", block);
        in_planes = widths[stage] * Expansion;
      }
    }
    append_layer("avgpool", "AdaptiveAvgPool2d", register_module("avgpool", PoolFlatten(1)));
    append_layer("fc", "Linear", register_module("fc", nn::Linear(512 * Expansion, classes)));
    init_like_torchvision(*this);
  }
};

// torchvision's VGG-19 (configuration E, no BatchNorm): 16 convolutions in `features`, a 7x7
// adaptive pool and a 3-layer classifier with dropout.
class Vgg19 : public ZooModel {
 public:
  explicit Vgg19(const ModelOptions& options) {
    const int64_t classes = options.num_classes > 0 ? options.num_classes : 1000;
    // `width` scales every layer (64 is torchvision's): channels w, 2w, 4w, 8w, 8w and a
    // classifier of 64w units, so reduced-size studies keep VGG's shape.
    const int64_t w = options.width > 0 ? options.width : 64;
    const int64_t config[] = {w,     w,     0,     2 * w, 2 * w, 0,     4 * w,
                              4 * w, 4 * w, 4 * w, 0,     8 * w, 8 * w, 8 * w,
                              8 * w, 0,     8 * w, 8 * w, 8 * w, 8 * w, 0};  // 0: max pool
    auto features = register_module("features", nn::Sequential());
    int64_t channels = options.input_shape[0];
    auto add = [&](const std::string& kind, auto module) {
      const std::string name = "features." + std::to_string(features->size());
      features->push_back(module);
      append_layer(name, kind, module);
    };
    for (int64_t width : config) {
      if (width == 0) {
        add("MaxPool2d", nn::MaxPool2d(nn::MaxPool2dOptions(2).stride(2)));
      } else {
        add("Conv2d", conv(channels, width, 3, 1, 1, /*bias=*/true));
        add("ReLU", nn::ReLU());
        channels = width;
      }
    }
    append_layer("avgpool", "AdaptiveAvgPool2d", register_module("avgpool", PoolFlatten(7)));
    auto classifier = register_module("classifier", nn::Sequential());
    auto add_classifier = [&](const std::string& kind, auto module) {
      const std::string name = "classifier." + std::to_string(classifier->size());
      classifier->push_back(module);
      append_layer(name, kind, module);
    };
    const int64_t hidden = 64 * w;
    add_classifier("Linear", nn::Linear(8 * w * 7 * 7, hidden));
    add_classifier("ReLU", nn::ReLU());
    add_classifier("Dropout", nn::Dropout(0.5));
    add_classifier("Linear", nn::Linear(hidden, hidden));
    add_classifier("ReLU", nn::ReLU());
    add_classifier("Dropout", nn::Dropout(0.5));
    add_classifier("Linear", nn::Linear(hidden, classes));
    // torchvision: Kaiming-normal convolutions (fan_out), N(0, 0.01) linear weights, zero biases.
    init_like_torchvision(*this);
    for (auto& module : modules(false)) {
      if (auto* linear = module->as<nn::Linear>()) {
        nn::init::normal_(linear->weight, 0, 0.01);
        nn::init::zeros_(linear->bias);
      }
    }
  }
};

// BERT's embeddings: token plus learned position embeddings, then LayerNorm (no token types,
// no dropout: runs stay deterministic). Token ids [batch, seq] -> [batch, seq, hidden].
class EmbeddingsImpl : public nn::Module {
 public:
  EmbeddingsImpl(int64_t vocabulary, int64_t max_positions, int64_t hidden) {
    tokens = register_module("word_embeddings", nn::Embedding(vocabulary, hidden));
    positions = register_module("position_embeddings", nn::Embedding(max_positions, hidden));
    norm = register_module("LayerNorm", nn::LayerNorm(nn::LayerNormOptions({hidden}).eps(1e-12)));
  }
  torch::Tensor forward(torch::Tensor ids) {
    const auto position_ids = torch::arange(ids.size(1), ids.options().dtype(torch::kLong));
    return norm->forward(tokens->forward(ids) + positions->forward(position_ids).unsqueeze(0));
  }
  nn::Embedding tokens{nullptr}, positions{nullptr};
  nn::LayerNorm norm{nullptr};
};
TORCH_MODULE(Embeddings);

// One Transformer encoder layer: multi-head self-attention and a GELU feed-forward of 4x the
// width, each with a residual connection; with `moe`, the feed-forward is a mixture of such
// experts (runtime/models/moe.h). Post-LayerNorm as BERT's (eps 1e-12), or with `pre_norm`
// each branch normalising its input as ViT's (eps 1e-6). Batch-first throughout, so a pipeline
// splits micro-batches along dimension 0 like every other model.
class EncoderLayerImpl : public nn::Module {
 public:
  EncoderLayerImpl(int64_t hidden, int64_t heads, std::optional<MoeOptions> moe = std::nullopt,
                   bool pre_norm = false)
      : heads_(heads), pre_norm_(pre_norm) {
    const double eps = pre_norm ? 1e-6 : 1e-12;
    qkv = register_module("qkv", nn::Linear(hidden, 3 * hidden));
    attention_output = register_module("attention_output", nn::Linear(hidden, hidden));
    attention_norm =
        register_module("attention_norm", nn::LayerNorm(nn::LayerNormOptions({hidden}).eps(eps)));
    if (moe) {
      mixture = register_module("moe", MoeFeedForward(hidden, *moe));
    } else {
      intermediate = register_module("intermediate", nn::Linear(hidden, 4 * hidden));
      output = register_module("output", nn::Linear(4 * hidden, hidden));
    }
    output_norm =
        register_module("output_norm", nn::LayerNorm(nn::LayerNormOptions({hidden}).eps(eps)));
  }
  // Tensor parallelism (Megatron's): this rank's heads of the fused q, k, v (column-parallel,
  // each of the three split alike) and columns of the GELU feed-forward's first linear; the
  // attention's output and the feed-forward's second linear row-parallel, their biases added
  // once after the sum. With sequence parallelism the LayerNorms (and those biases) run on
  // this rank's tokens, their gradients partial.
  void split(const std::shared_ptr<TensorRegion>& region, bool first, bool last) {
    region_ = region;
    heads_ = region->share_of(heads_, "the attention heads");
    const torch::NoGradGuard no_grad;
    qkv->weight.set_data(grouped_column_shard(*region, qkv->weight, 3));
    qkv->bias.set_data(grouped_column_shard(*region, qkv->bias, 3));
    intermediate->weight.set_data(column_shard(*region, intermediate->weight));
    intermediate->bias.set_data(column_shard(*region, intermediate->bias));
    attention_output->weight.set_data(row_shard(*region, attention_output->weight));
    output->weight.set_data(row_shard(*region, output->weight));
    if (!region->sequence_parallel) return;
    for (at::Tensor* p : {&attention_norm->weight, &attention_norm->bias, &output_norm->weight,
                          &output_norm->bias, &attention_output->bias, &output->bias}) {
      add_partial_parameter(*region, *p);
    }
    shards_input_ = first;
    gathers_output_ = last;
  }
  // A column-parallel projection of x (runtime::column_projections).
  torch::Tensor column_parallel(nn::Linear& linear, const torch::Tensor& x) {
    return column_projections(region_.get(), x, {{linear->weight, linear->bias}})[0];
  }
  torch::Tensor forward(torch::Tensor x) {
    if (pre_norm_) {
      x = x + attention(attention_norm->forward(x));
      return x + feed_forward(output_norm->forward(x));
    }
    if (shards_input_) x = split_sequence(*region_, x);
    x = attention_norm->forward(x + attention(x));
    x = output_norm->forward(x + feed_forward(x));
    return gathers_output_ ? gather_sequence(*region_, x) : x;
  }
  nn::Linear qkv{nullptr}, attention_output{nullptr}, intermediate{nullptr}, output{nullptr};
  nn::LayerNorm attention_norm{nullptr}, output_norm{nullptr};
  bool recompute_core = false;  // selective recomputation (runtime/models/attention_core.h)
  MoeFeedForward mixture{nullptr};

 private:
  // Self-attention's branch, before the residual.
  torch::Tensor attention(const torch::Tensor& x) {
    const torch::Tensor fused = column_parallel(qkv, x);
    const int64_t batch = fused.size(0), seq = fused.size(1);
    const int64_t head_dim = x.size(2) / (region_ ? heads_ * region_->degree : heads_);
    // [batch, seq, 3, heads, head_dim] -> three [batch, heads, seq, head_dim]
    auto parts = fused.view({batch, seq, 3, heads_, head_dim}).permute({2, 0, 3, 1, 4});
    auto context = recompute_core ? recomputed_attention_core(parts[0], parts[1], parts[2], false)
                                  : attention_core(parts[0], parts[1], parts[2], false);
    context = context.transpose(1, 2).reshape({batch, seq, heads_ * head_dim});
    return row_parallel(attention_output, context);
  }
  // The feed-forward's branch (or the mixture's), before the residual.
  torch::Tensor feed_forward(const torch::Tensor& x) {
    if (mixture) return mixture->forward(x);
    return row_parallel(output, torch::gelu(column_parallel(intermediate, x)));
  }
  // A linear layer whole, or row-parallel: this rank's partial product summed over the group,
  // then the bias.
  torch::Tensor row_parallel(nn::Linear& linear, const torch::Tensor& input) {
    if (!region_) return linear->forward(input);
    return leave_tensor_region(*region_, torch::nn::functional::linear(input, linear->weight)) +
           linear->bias;
  }
  int64_t heads_;
  bool pre_norm_;
  std::shared_ptr<TensorRegion> region_;
  bool shards_input_ = false, gathers_output_ = false;
};
TORCH_MODULE(EncoderLayer);

// BERT's pooler: the first token's hidden state through a tanh layer, [batch, hidden].
class PoolerImpl : public nn::Module {
 public:
  explicit PoolerImpl(int64_t hidden) {
    dense = register_module("dense", nn::Linear(hidden, hidden));
  }
  torch::Tensor forward(torch::Tensor x) { return torch::tanh(dense->forward(x.select(1, 0))); }
  nn::Linear dense{nullptr};
};
TORCH_MODULE(Pooler);

// What BERT and ViT share: `depth` encoder layers (12 by default) under Hugging Face's names
// (encoder.layer.<i>.<...>), with `moe` a mixture in every `every`-th of them (the 2nd, 4th, ...:
// GShard's placement), and BERT's initialisation.
class EncoderModel : public ZooModel {
 public:
  torch::Tensor auxiliary_loss() const override { return summed_auxiliary_loss(mixtures_); }

 protected:
  std::vector<EncoderLayer> add_encoder_layers(const ModelOptions& options, int64_t hidden,
                                               const std::optional<MoeOptions>& moe,
                                               bool pre_norm) {
    const int64_t depth = options.depth > 0 ? options.depth : 12;
    auto encoder = register_module("encoder", std::make_shared<nn::Module>());
    auto encoder_layers = encoder->register_module("layer", nn::ModuleList());
    std::vector<EncoderLayer> blocks;
    for (int64_t i = 0; i < depth; ++i) {
      const bool mixture = moe && (i + 1) % options.moe.every == 0;
      EncoderLayer layer(hidden, hidden / 64, mixture ? moe : std::nullopt, pre_norm);
      layer->recompute_core = options.selective_recomputation;
      if (layer->mixture) mixtures_.push_back(layer->mixture.get());
      blocks.push_back(layer);
      encoder_layers->push_back(layer);
      append_layer("encoder.layer." + std::to_string(i), "EncoderLayer", layer, !mixture);
    }
    return blocks;
  }

  // BERT: N(0, 0.02) weights, zero biases, LayerNorm to identity. Experts draw from their own
  // generators (one seed per mixture from the global one), so that a rank holding some of them
  // starts them as a rank holding all does.
  void initialize_weights() {
    for (const auto& item : named_modules("", false)) {
      const auto& module = item.value();
      if (item.key().find(".moe.experts") != std::string::npos) continue;
      if (auto* mixture = module->as<MoeFeedForwardImpl>()) {
        const auto seed = torch::randint(int64_t{1} << 62, {1}, torch::kLong).item<int64_t>();
        mixture->initialize_experts(static_cast<uint64_t>(seed), 0.02);
      }
      if (auto* linear = module->as<nn::Linear>()) {
        nn::init::normal_(linear->weight, 0, 0.02);
        if (linear->bias.defined()) nn::init::zeros_(linear->bias);  // routers have none
      } else if (auto* embedding = module->as<nn::Embedding>()) {
        nn::init::normal_(embedding->weight, 0, 0.02);
      }
    }
  }

  std::vector<MoeFeedForwardImpl*> mixtures_;  // owned by the encoder layers
};

// A BERT-style encoder for sequence classification: embeddings, the encoder layers (BERT-base's
// 12 by default), pooler, classifier. Width 768 by default with 64-wide heads; input [seq_len]
// token ids from a 30522-token vocabulary, as BERT's. With `moe`, every other encoder layer has
// a mixture-of-experts feed-forward.
class Bert : public EncoderModel {
 public:
  explicit Bert(const ModelOptions& options, std::optional<MoeOptions> moe = std::nullopt) {
    const int64_t hidden = options.width > 0 ? options.width : 768;
    const int64_t classes = options.num_classes > 0 ? options.num_classes : 2;
    input_vocabulary_ = kBertVocabulary;
    append_layer("embeddings", "Embeddings",
                 register_module("embeddings",
                                 Embeddings(input_vocabulary_, options.input_shape[0], hidden)));
    std::vector<EncoderLayer> blocks = add_encoder_layers(options, hidden, moe, false);
    append_layer("pooler", "Pooler", register_module("pooler", Pooler(hidden)));
    append_layer("classifier", "Linear",
                 register_module("classifier", nn::Linear(hidden, classes)));
    initialize_weights();
    split_blocks(blocks, options);
  }

 private:
  // Tensor parallelism, once the whole model is drawn: every rank's slices are parts of one.
  void split_blocks(std::vector<EncoderLayer>& blocks, const ModelOptions& options) {
    tensor_region_ = make_tensor_region(options.tensor_shard, options.tensor_shards,
                                        options.sequence_parallel, options.recompute_gather);
    if (!tensor_region_) return;
    if (!mixtures_.empty()) {
      throw std::invalid_argument("tensor parallelism does not split a mixture of experts");
    }
    if (options.vocabulary_parallel) {
      throw std::invalid_argument("vocabulary parallelism splits llama's embedding and head");
    }
    for (size_t i = 0; i < blocks.size(); ++i) {
      blocks[i]->split(tensor_region_, i == 0, i + 1 == blocks.size());
    }
  }
};

// ViT's patch embedding (ViT-B/16): each 16 x 16 patch flattened and projected (a linear layer
// over its pixels, as the stride-16 convolution computes), a learned class token in front and
// learned positions added. Images [batch, channels, height, width] -> [batch, 1 + patches,
// hidden].
class PatchEmbeddingsImpl : public nn::Module {
 public:
  PatchEmbeddingsImpl(int64_t channels, int64_t patches, int64_t hidden) {
    projection =
        register_module("projection", nn::Linear(channels * kVitPatch * kVitPatch, hidden));
    class_token = register_parameter("class_token", torch::zeros({1, 1, hidden}));
    positions = register_parameter("positions", torch::zeros({1, patches + 1, hidden}));
  }
  torch::Tensor forward(torch::Tensor images) {
    const torch::Tensor tokens = projection->forward(image_patches(images));
    return torch::cat({class_token.expand({images.size(0), 1, -1}), tokens}, 1) + positions;
  }
  nn::Linear projection{nullptr};
  torch::Tensor class_token, positions;
};
TORCH_MODULE(PatchEmbeddings);

// ViT's head: the last LayerNorm, then a linear classifier of the class token.
class VitHeadImpl : public nn::Module {
 public:
  VitHeadImpl(int64_t hidden, int64_t classes) {
    norm = register_module("norm", nn::LayerNorm(nn::LayerNormOptions({hidden}).eps(1e-6)));
    classifier = register_module("classifier", nn::Linear(hidden, classes));
  }
  torch::Tensor forward(torch::Tensor x) {
    return classifier->forward(norm->forward(x).select(1, 0));
  }
  nn::LayerNorm norm{nullptr};
  nn::Linear classifier{nullptr};
};
TORCH_MODULE(VitHead);

// A ViT-style encoder for image classification (ViT-B/16 by default: 12 pre-LayerNorm layers
// of 768, heads of 64, 1000 classes): patch embeddings, the encoder layers, the head. With
// `moe`, every other layer's feed-forward is a mixture of experts (ViT-MoE: HiDup's ViT-SGMoE
// and ViT-Switch). Initialised as BERT, the class token and positions N(0, 0.02) too.
class Vit : public EncoderModel {
 public:
  explicit Vit(const ModelOptions& options, std::optional<MoeOptions> moe = std::nullopt) {
    const int64_t hidden = options.width > 0 ? options.width : 768;
    const int64_t classes = options.num_classes > 0 ? options.num_classes : 1000;
    const auto& image = options.input_shape;
    const int64_t patches = (image[1] / kVitPatch) * (image[2] / kVitPatch);
    auto embeddings = register_module("embeddings", PatchEmbeddings(image[0], patches, hidden));
    append_layer("embeddings", "PatchEmbeddings", embeddings);
    add_encoder_layers(options, hidden, moe, /*pre_norm=*/true);
    append_layer("head", "VitHead", register_module("head", VitHead(hidden, classes)));
    initialize_weights();
    nn::init::normal_(embeddings->class_token, 0, 0.02);
    nn::init::normal_(embeddings->positions, 0, 0.02);
  }
};

// Linear layers with ReLU (three by default), no BatchNorm: per-sample independent, so
// data-parallel gradients equal single-process ones exactly (up to float summation order).
class Mlp : public ZooModel {
 public:
  explicit Mlp(const ModelOptions& options) {
    int64_t in = 1;
    for (int64_t d : options.input_shape) in *= d;
    const int64_t classes = options.num_classes > 0 ? options.num_classes : 10;
    const int64_t hidden_layers = options.depth > 0 ? options.depth : 2;
    const int64_t width = options.width > 0 ? options.width : 256;
    append_layer("flatten", "Flatten", register_module("flatten", nn::Flatten()));
    for (int64_t i = 1; i <= hidden_layers; ++i) {
      const std::string fc = "fc" + std::to_string(i), relu = "relu" + std::to_string(i);
      append_layer(fc, "Linear", register_module(fc, nn::Linear(i == 1 ? in : width, width)));
      append_layer(relu, "ReLU", register_module(relu, nn::ReLU()));
    }
    const std::string last = "fc" + std::to_string(hidden_layers + 1);
    append_layer(last, "Linear", register_module(last, nn::Linear(width, classes)));
  }
};

std::shared_ptr<ZooModel> make_zoo_model(const std::string& name, const ModelOptions& options) {
  // The options' rules live in one place, torch-free, so that the harness checks a spec by
  // the same rule (runtime/models/model_catalog.h); the constructors below assume them.
  check_model_options(name, options.input_shape, options.depth, options.width, options.moe,
                      options.decoder);
  if (name == "resnet50") {
    return std::make_shared<ResNet<Bottleneck, 4>>(std::vector<int64_t>{3, 4, 6, 3}, options);
  }
  if (name == "resnet18") {
    return std::make_shared<ResNet<BasicBlock, 1>>(std::vector<int64_t>{2, 2, 2, 2}, options);
  }
  if (name == "vgg19") return std::make_shared<Vgg19>(options);
  if (name == "mlp") return std::make_shared<Mlp>(options);
  if (name == "bert") return std::make_shared<Bert>(options);
  if (name == "llama") return make_llama(options);
  if (name == "vit") return std::make_shared<Vit>(options);
  if (is_mixture_of_experts(name)) {
    const MoeOptions moe{.experts = options.moe.experts,
                         .top_k = options.moe.top_k,
                         .capacity_factor = options.moe.capacity_factor,
                         .groups = options.moe_groups,
                         .shard = options.expert_shard,
                         .shards = options.expert_shards};
    if (name == "vit_moe") return std::make_shared<Vit>(options, moe);
    return std::make_shared<Bert>(options, moe);
  }
  throw std::invalid_argument("unknown model '" + name + "'");
}

}  // namespace

torch::Tensor image_patches(const torch::Tensor& images) {
  const int64_t batch = images.size(0), channels = images.size(1);
  const int64_t rows = images.size(2) / kVitPatch, columns = images.size(3) / kVitPatch;
  // [batch, channels, rows, 16, columns, 16] -> [batch, rows x columns, channels x 16 x 16]
  return images.reshape({batch, channels, rows, kVitPatch, columns, kVitPatch})
      .permute({0, 2, 4, 1, 3, 5})
      .reshape({batch, rows * columns, -1});
}

std::shared_ptr<ZooModel> make_model(const std::string& name, const ModelOptions& options) {
  std::shared_ptr<ZooModel> model = make_zoo_model(name, options);
  model->set_activation_checkpointing(options.activation_checkpointing, options.recompute_every);
  return model;
}

int64_t parameter_count(const torch::nn::Module& module) {
  int64_t count = 0;
  for (const auto& p : module.parameters()) count += p.numel();
  return count;
}

}  // namespace runtime
