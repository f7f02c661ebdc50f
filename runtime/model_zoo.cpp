#include "runtime/model_zoo.h"

#include <torch/nn.h>

#include <stdexcept>

namespace runtime {
namespace nn = torch::nn;
namespace {

nn::Conv2d conv(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding).bias(false));
}

// torchvision's BasicBlock (ResNet-18/34): two 3x3 convolutions.
class BasicBlock : public nn::Module {
 public:
  static constexpr int64_t kExpansion = 1;
  BasicBlock(int64_t in, int64_t planes, int64_t stride) {
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

// torchvision's Bottleneck (ResNet V1.5): the stride sits on the 3x3 convolution.
class Bottleneck : public nn::Module {
 public:
  static constexpr int64_t kExpansion = 4;
  Bottleneck(int64_t in, int64_t planes, int64_t stride) {
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

template <typename Block>
class ResNet : public ZooModel {
 public:
  ResNet(const std::vector<int64_t>& blocks, const ModelOptions& options) {
    if (options.input_shape.size() != 3) {
      throw std::invalid_argument("resnet input_shape must be [channels, height, width]");
    }
    const int64_t classes = options.num_classes > 0 ? options.num_classes : 1000;
    conv1 = register_module("conv1", conv(options.input_shape[0], 64, 7, 2, 3));
    bn1 = register_module("bn1", nn::BatchNorm2d(64));
    const int64_t widths[] = {64, 128, 256, 512};
    for (int stage = 0; stage < 4; ++stage) {
      nn::Sequential layer;
      for (int64_t b = 0; b < blocks[stage]; ++b) {
        const int64_t stride = (stage > 0 && b == 0) ? 2 : 1;
        layer->push_back(std::make_shared<Block>(in_planes_, widths[stage], stride));
        in_planes_ = widths[stage] * Block::kExpansion;
      }
      layers_.push_back(register_module("layer" + std::to_string(stage + 1), layer));
    }
    fc = register_module("fc", nn::Linear(512 * Block::kExpansion, classes));
    // torchvision's initialisation: Kaiming-normal convolutions (fan_out), BN to identity.
    for (auto& module : modules(/*include_self=*/false)) {
      if (auto* c = module->as<nn::Conv2d>()) {
        nn::init::kaiming_normal_(c->weight, 0.0, torch::kFanOut, torch::kReLU);
      } else if (auto* bn = module->as<nn::BatchNorm2d>()) {
        nn::init::ones_(bn->weight);
        nn::init::zeros_(bn->bias);
      }
    }
  }
  torch::Tensor forward(torch::Tensor x) override {
    x = torch::max_pool2d(torch::relu(bn1->forward(conv1->forward(x))), 3, 2, 1);
    for (auto& layer : layers_) x = layer->forward(x);
    x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
    return fc->forward(x);
  }

 private:
  int64_t in_planes_ = 64;
  nn::Conv2d conv1{nullptr};
  nn::BatchNorm2d bn1{nullptr};
  std::vector<nn::Sequential> layers_;
  nn::Linear fc{nullptr};
};

// Three linear layers with ReLU, no BatchNorm: per-sample independent, so data-parallel
// gradients equal single-process ones exactly (up to float summation order).
class Mlp : public ZooModel {
 public:
  explicit Mlp(const ModelOptions& options) {
    int64_t in = 1;
    for (int64_t d : options.input_shape) in *= d;
    const int64_t classes = options.num_classes > 0 ? options.num_classes : 10;
    fc1 = register_module("fc1", nn::Linear(in, 256));
    fc2 = register_module("fc2", nn::Linear(256, 256));
    fc3 = register_module("fc3", nn::Linear(256, classes));
  }
  torch::Tensor forward(torch::Tensor x) override {
    x = torch::relu(fc1->forward(x.flatten(1)));
    x = torch::relu(fc2->forward(x));
    return fc3->forward(x);
  }
  nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
};

}  // namespace

const std::vector<ModelEntry>& model_catalog() {
  static const std::vector<ModelEntry> catalog = {
      {"resnet50", "torchvision ResNet-50 (Bottleneck, V1.5)", {3, 224, 224}},
      {"resnet18", "torchvision ResNet-18 (BasicBlock)", {3, 224, 224}},
      {"mlp", "3-layer MLP (in->256->256->classes), no BatchNorm", {64}},
  };
  return catalog;
}

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const auto& entry : model_catalog()) names.push_back(entry.name);
  return names;
}

std::shared_ptr<ZooModel> make_model(const std::string& name, const ModelOptions& options) {
  if (name == "resnet50")
    return std::make_shared<ResNet<Bottleneck>>(std::vector<int64_t>{3, 4, 6, 3}, options);
  if (name == "resnet18")
    return std::make_shared<ResNet<BasicBlock>>(std::vector<int64_t>{2, 2, 2, 2}, options);
  if (name == "mlp") return std::make_shared<Mlp>(options);
  throw std::invalid_argument("unknown model '" + name + "'");
}

int64_t parameter_count(const torch::nn::Module& module) {
  int64_t count = 0;
  for (const auto& p : module.parameters()) count += p.numel();
  return count;
}

}  // namespace runtime
