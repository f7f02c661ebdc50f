// The models ranks train: torchvision's ResNet-18/50 and VGG-19 (same layers, parameter names
// and counts), a BERT-style Transformer encoder of configurable depth and width, and a small
// MLP without BatchNorm for fast, exactly comparable tests. Every
// model is a chain of named layers: forward(x) applies them in order, which is what the layer
// profiler times one by one and what a pipeline splits into stages.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/any.h>
#include <torch/types.h>

#include <memory>
#include <string>
#include <vector>

#include "runtime/models/model_catalog.h"

namespace runtime {

struct TensorRegion;  // runtime/parallel/tensor_region.h

struct Layer {
  std::string name;  // torchvision's module path ("layer1.0", "features.3", "fc")
  std::string kind;  // "Conv2d", "Bottleneck", "ReLU", ...
  torch::nn::AnyModule module;
  // A transformer block that activation checkpointing may recompute: its forward has no side
  // effect (no running statistics, no routing state) and draws no random numbers.
  bool recomputable = false;
  bool recomputed = false;  // recomputable, and chosen by set_activation_checkpointing
};

class ZooModel : public torch::nn::Module {
 public:
  torch::Tensor forward(torch::Tensor input);
  // Layers first..last (inclusive) only: one pipeline stage's part of forward().
  torch::Tensor forward_layers(torch::Tensor input, size_t first, size_t last);
  // Full activation checkpointing (runtime/models/activation_checkpoint.h): every recomputable
  // layer keeps only its input while gradients are recorded -- or, with `every` k, the first of
  // each k of them (runtime::recomputed_layers says which). Whether a model has such layers:
  // has_recomputable_layers().
  void set_activation_checkpointing(bool on, int64_t every = 1);
  bool activation_checkpointing() const { return checkpointing_; }
  bool has_recomputable_layers() const;
  const std::vector<Layer>& layers() const { return layers_; }
  // > 0: the model reads token ids in [0, input_vocabulary) (int64), not float features.
  int64_t input_vocabulary() const { return input_vocabulary_; }
  // Mixture-of-experts models: the sum of their layers' load-balancing losses of the last
  // forward (runtime/models/moe.h), which training adds to the loss with a small weight;
  // undefined for every other model.
  virtual torch::Tensor auxiliary_loss() const { return {}; }
  // A model split over a tensor axis (ModelOptions::tensor_shards > 1): the region its split
  // layers share, whose group the rank sets before the first forward; null otherwise.
  TensorRegion* tensor_region() const { return tensor_region_.get(); }

 protected:
  // Registers `module` under `name` (when it has a name; chains of one Sequential register
  // that instead) and appends it to the layer chain.
  template <typename ModuleHolder>
  void append_layer(const std::string& name, const std::string& kind, ModuleHolder module,
                    bool recomputable = false) {
    layers_.push_back({name, kind, torch::nn::AnyModule(module), recomputable});
  }
  int64_t input_vocabulary_ = 0;
  std::shared_ptr<TensorRegion> tensor_region_;

 private:
  torch::Tensor forward_layer(Layer& layer, torch::Tensor input);
  std::vector<Layer> layers_;
  bool checkpointing_ = false;
};

struct ModelOptions {
  std::vector<int64_t> input_shape;  // per sample, e.g. {3, 224, 224} or {64}
  int64_t num_classes = 0;           // 0: the model's default (1000 for ResNets, 10 for mlp)
  // Size knobs, 0 = the model's default: bert's encoder layers and hidden width, vgg19's base
  // channel count (classifier width = 64 x it), mlp's hidden layers and width. ResNets have none.
  int64_t depth = 0;
  int64_t width = 0;
  MoeShape moe;          // bert_moe
  DecoderShape decoder;  // llama
  // bert_moe, how its ranks train it (runtime/models/moe.h): tokens routed in this many groups
  // (a single process standing for that many ranks); experts sharded, this rank's shard of
  // `expert_shards` (expert parallelism).
  int64_t moe_groups = 1;
  int64_t expert_shard = 0;
  int64_t expert_shards = 1;
  // llama and bert, tensor parallelism (runtime/parallel/tensor_region.h): built whole from the
  // seed, then this rank's heads and feed-forward columns of `tensor_shards` kept; with
  // `sequence_parallel`, the activations between split layers sharded along the tokens.
  int64_t tensor_shard = 0;
  int64_t tensor_shards = 1;
  bool sequence_parallel = false;
  // llama: the token embedding and the head split by vocabulary rows too (its logits this
  // rank's vocabulary columns: runtime/parallel/vocabulary_parallel.h).
  bool vocabulary_parallel = false;
  // Under sequence parallelism, keep only the token shards of the split blocks' inputs and
  // gather them again in backward, as Megatron-LM does (runtime::gathered_projections).
  bool recompute_gather = false;
  // Full activation checkpointing of the transformer blocks, the first of each
  // `recompute_every` of them (ZooModel::set_activation_checkpointing).
  bool activation_checkpointing = false;
  int64_t recompute_every = 1;
  // Selective recomputation: llama's and bert's attention cores keep only their queries, keys
  // and values (runtime/models/attention_core.h).
  bool selective_recomputation = false;
};

// A spec's `model.activation_checkpointing` ("none", "full" or "selective") and, for full, its
// `recompute_every`, as the options a rank and a layer profile build the model with.
void set_recomputation(ModelOptions& options, const std::string& activation_checkpointing,
                       int64_t recompute_every);

// Builds a model with weights drawn from torch's current generator (seed it first).
// Throws std::invalid_argument for an unknown name.
std::shared_ptr<ZooModel> make_model(const std::string& name, const ModelOptions& options);

int64_t parameter_count(const torch::nn::Module& module);

// ViT's 16 x 16 patches of images [batch, channels, height, width]: [batch, patches, channels x
// 16 x 16], the patches in row-major order.
torch::Tensor image_patches(const torch::Tensor& images);

}  // namespace runtime
