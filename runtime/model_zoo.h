// The models ranks train: torchvision's ResNet-18/50 (same layers, parameter names and
// counts) and a small MLP without BatchNorm for fast, exactly comparable tests.
#pragma once

#include <torch/nn/module.h>
#include <torch/types.h>

#include <memory>
#include <string>
#include <vector>

namespace runtime {

class ZooModel : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(torch::Tensor input) = 0;
};

struct ModelOptions {
  std::vector<int64_t> input_shape;  // per sample, e.g. {3, 224, 224} or {64}
  int64_t num_classes = 0;           // 0: the model's default (1000 for ResNets, 10 for mlp)
};

struct ModelEntry {
  std::string name;
  std::string description;
  std::vector<int64_t> default_input_shape;
};

const std::vector<ModelEntry>& model_catalog();
std::vector<std::string> model_names();

// Builds a model with weights drawn from torch's current generator (seed it first).
// Throws std::invalid_argument for an unknown name.
std::shared_ptr<ZooModel> make_model(const std::string& name, const ModelOptions& options);

int64_t parameter_count(const torch::nn::Module& module);

}  // namespace runtime
