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

// The zoo's rules for a model's options, checked without building it (the zoo applies them
// before it builds a model; the harness when it reads a spec): the input shape's rank, which
// models take depth and width, BERT's width in heads of 64, and sizes a CPU process can hold
// (at most 2^26 input elements per sample, width 65536, depth 1024). Throws
// std::invalid_argument with the reason.
void check_model_options(const std::string& name, const std::vector<int64_t>& input_shape,
                         int64_t depth, int64_t width);

}  // namespace runtime
