#include "runtime/model_zoo.h"

#include <torch/nn.h>

#include <stdexcept>

namespace runtime {
namespace nn = torch::nn;

torch::Tensor ZooModel::forward(torch::Tensor input) {
  for (auto& layer : layers_) input = layer.module.forward(input);
  return input;
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
      downsample = register_module(
          "downsample", nn::Sequential(conv(in, planes * kExpansion, 1, stride, 0),
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
    if (options.input_shape.size() != 3) {
      throw std::invalid_argument("resnet input_shape must be [channels, height, width]");
    }
    const int64_t classes = options.num_classes > 0 ? options.num_classes : 1000;
    append_layer("conv1", "Conv2d", register_module("conv1", conv(options.input_shape[0], 64, 7, 2, 3)));
    append_layer("bn1", "BatchNorm2d", register_module("bn1", nn::BatchNorm2d(64)));
    append_layer("relu", "ReLU", register_module("relu", nn::ReLU()));
    append_layer("maxpool", "MaxPool2d",
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
        append_layer(stage_name + "." + std::to_string(b), Expansion == 4 ? "Bottleneck" : "BasicBlock",
                     block);
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
    if (options.input_shape.size() != 3) {
      throw std::invalid_argument("vgg19 input_shape must be [channels, height, width]");
    }
    const int64_t classes = options.num_classes > 0 ? options.num_classes : 1000;
    const int64_t config[] = {64, 64, 0, 128, 128, 0, 256, 256, 256, 256, 0,
                              512, 512, 512, 512, 0, 512, 512, 512, 512, 0};  // 0: max pool
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
    add_classifier("Linear", nn::Linear(512 * 7 * 7, 4096));
    add_classifier("ReLU", nn::ReLU());
    add_classifier("Dropout", nn::Dropout(0.5));
    add_classifier("Linear", nn::Linear(4096, 4096));
    add_classifier("ReLU", nn::ReLU());
    add_classifier("Dropout", nn::Dropout(0.5));
    add_classifier("Linear", nn::Linear(4096, classes));
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

// Three linear layers with ReLU, no BatchNorm: per-sample independent, so data-parallel
// gradients equal single-process ones exactly (up to float summation order).
class Mlp : public ZooModel {
 public:
  explicit Mlp(const ModelOptions& options) {
    int64_t in = 1;
    for (int64_t d : options.input_shape) in *= d;
    const int64_t classes = options.num_classes > 0 ? options.num_classes : 10;
    append_layer("flatten", "Flatten", register_module("flatten", nn::Flatten()));
    append_layer("fc1", "Linear", register_module("fc1", nn::Linear(in, 256)));
    append_layer("relu1", "ReLU", register_module("relu1", nn::ReLU()));
    append_layer("fc2", "Linear", register_module("fc2", nn::Linear(256, 256)));
    append_layer("relu2", "ReLU", register_module("relu2", nn::ReLU()));
    append_layer("fc3", "Linear", register_module("fc3", nn::Linear(256, classes)));
  }
};

}  // namespace

const std::vector<ModelEntry>& model_catalog() {
  static const std::vector<ModelEntry> catalog = {
      {"resnet50", "torchvision ResNet-50 (Bottleneck, V1.5)", {3, 224, 224}},
      {"resnet18", "torchvision ResNet-18 (BasicBlock)", {3, 224, 224}},
      {"vgg19", "torchvision VGG-19 (configuration E, no BatchNorm)", {3, 224, 224}},
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
  if (name == "resnet50") {
    return std::make_shared<ResNet<Bottleneck, 4>>(std::vector<int64_t>{3, 4, 6, 3}, options);
  }
  if (name == "resnet18") {
    return std::make_shared<ResNet<BasicBlock, 1>>(std::vector<int64_t>{2, 2, 2, 2}, options);
  }
  if (name == "vgg19") return std::make_shared<Vgg19>(options);
  if (name == "mlp") return std::make_shared<Mlp>(options);
  throw std::invalid_argument("unknown model '" + name + "'");
}

int64_t parameter_count(const torch::nn::Module& module) {
  int64_t count = 0;
  for (const auto& p : module.parameters()) count += p.numel();
  return count;
}

}  // namespace runtime
