// What the harness asks of the model zoo that only LibTorch can answer: parameter counts, a
// model's layer chain at an input shape, per-layer forward times, the LibTorch version. The
// harness asks through `harness-rank models|layers|version`, which print these as JSON
// (rank/zoo_query_commands.h), so that the harness itself never loads LibTorch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/models/model_catalog.h"

namespace runtime {

struct ModelListing {
  std::string name;
  std::string description;
  std::vector<int64_t> input_shape;
  int64_t tensors = 0;
  int64_t parameters = 0;
};

// Builds every zoo model once to count its parameters.
std::vector<ModelListing> list_models();

// The layer chain of a zoo model built with these options (names as ZooModel::layers());
// an empty input shape is the model's default.
// Throws std::invalid_argument for an unknown model or options it does not take.
std::vector<std::string> zoo_layer_names(const std::string& model,
                                         const std::vector<int64_t>& input_shape,
                                         int64_t num_classes, int64_t depth, int64_t width,
                                         const MoeShape& moe = {},
                                         const DecoderShape& decoder = {});

// Forward time of each layer of that model on `batch` synthetic samples (median of 3 after a
// warm-up, no autograd, one thread): the weights `stages: N` balances pipeline stages by.
std::vector<double> zoo_layer_forward_ms(const std::string& model,
                                         const std::vector<int64_t>& input_shape,
                                         int64_t num_classes, int64_t depth, int64_t width,
                                         int64_t batch, const MoeShape& moe = {},
                                         const DecoderShape& decoder = {});

// Forward FLOPs of each layer for one sample (runtime/models/flop_count.h).
std::vector<double> zoo_layer_forward_flops(const std::string& model,
                                            const std::vector<int64_t>& input_shape,
                                            int64_t num_classes, int64_t depth, int64_t width,
                                            const MoeShape& moe = {},
                                            const DecoderShape& decoder = {});

// One layer of the chain as `harness models NAME` prints it: what `stages: [{layers: "0-3"}]` and
// a sharded system's `unit: layer` count.
struct LayerEntry {
  std::string name, kind;
  int64_t parameters = 0;
  std::vector<int64_t> output_shape;  // of one sample, batch dimension left out
};

// The chain of that model, each layer's output shape from one sample through the layers in turn.
std::vector<LayerEntry> zoo_layer_chain(const std::string& model,
                                        const std::vector<int64_t>& input_shape,
                                        int64_t num_classes, int64_t depth, int64_t width,
                                        const MoeShape& moe = {}, const DecoderShape& decoder = {});

// "1.13.1" etc.
std::string torch_version();

}  // namespace runtime
