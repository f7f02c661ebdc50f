// The rank program: `harness worker ...` runs one rank of one system at one point. The
// harness launches world_size of these; each trains the model on its shard of synthetic
// data and writes its per-iteration timings. Torch-free header: the CLI includes it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace runtime {

// argv as after "worker": --config FILE --rank R --world-size N --out DIR
// [--rendezvous tcp|file] [--master-addr A] [--master-port P] [--store-path F].
// Returns the process exit code.
int worker_main(const std::vector<std::string>& args);

struct ModelListing {
  std::string name;
  std::string description;
  std::vector<int64_t> input_shape;
  int64_t tensors = 0;
  int64_t parameters = 0;
};

// Builds every zoo model once to count its parameters.
std::vector<ModelListing> list_models();

// Names model.name accepts.
std::vector<std::string> zoo_model_names();

// The layer chain of a zoo model built with these options (names as ZooModel::layers());
// an empty input shape is the model's default.
// Throws std::invalid_argument for an unknown model or options it does not take.
std::vector<std::string> zoo_layer_names(const std::string& model,
                                         const std::vector<int64_t>& input_shape,
                                         int64_t num_classes, int64_t depth, int64_t width);

// Forward time of each layer of that model on `batch` synthetic samples (median of 3 after a
// warm-up, no autograd, one thread): the weights `stages: N` balances pipeline stages by.
std::vector<double> zoo_layer_forward_ms(const std::string& model,
                                         const std::vector<int64_t>& input_shape,
                                         int64_t num_classes, int64_t depth, int64_t width,
                                         int64_t batch);

// "1.13.1" etc.
std::string torch_version();

}  // namespace runtime
