#include "runtime/models/model_catalog.h"

namespace runtime {

const std::vector<ModelEntry>& model_catalog() {
  static const std::vector<ModelEntry> catalog = {
      {"resnet50", "torchvision ResNet-50 (Bottleneck, V1.5)", {3, 224, 224}},
      {"resnet18", "torchvision ResNet-18 (BasicBlock)", {3, 224, 224}},
      {"vgg19", "torchvision VGG-19 (configuration E, no BatchNorm)", {3, 224, 224}},
      {"bert", "BERT-style encoder (12 layers x 768 by default; model.depth, model.width)", {128}},
      {"mlp", "3-layer MLP (in->256->256->classes), no BatchNorm", {64}},
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

}  // namespace runtime
