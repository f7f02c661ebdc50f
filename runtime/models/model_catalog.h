// The zoo's catalog: which models exist, what they are, their default input. Torch-free, so
// the harness validates `model.name` without loading LibTorch (building a model, counting its
// layers or parameters, is the rank program's: runtime/models/model_zoo.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace runtime {

struct ModelEntry {
  std::string name;
  std::string description;
  std::vector<int64_t> default_input_shape;
};

const std::vector<ModelEntry>& model_catalog();
std::vector<std::string> model_names();
// The catalog's entry for `name`, or nullptr.
const ModelEntry* find_model(const std::string& name);

}  // namespace runtime
