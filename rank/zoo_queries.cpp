#include "rank/zoo_queries.h"

#include <torch/torch.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>

#include "runtime/models/flop_count.h"
#include "runtime/models/model_zoo.h"
#include "runtime/models/synthetic_batch.h"

namespace runtime {
namespace {

double milliseconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

// The options a query builds `model` with; an empty input shape is the model's default, as
// the profiler and the listing use.
ModelOptions query_options(const std::string& model, const std::vector<int64_t>& input_shape,
                           int64_t num_classes, int64_t depth, int64_t width, const MoeShape& moe,
                           const DecoderShape& decoder) {
  ModelOptions options;
  options.input_shape = input_shape;
  const ModelEntry* entry = find_model(model);
  if (input_shape.empty() && entry) options.input_shape = entry->default_input_shape;
  options.num_classes = num_classes;
  options.depth = depth;
  options.width = width;
  options.moe = moe;
  options.decoder = decoder;
  return options;
}

// A query's model built from seed 0 in eval mode (BatchNorm cannot train on one sample; the
// shapes and FLOPs are the same), and one synthetic sample to pass through its chain.
struct OneSample {
  std::shared_ptr<ZooModel> model;
  torch::Tensor input;
};
OneSample model_with_one_sample(const std::string& model, const ModelOptions& options) {
  torch::manual_seed(0);
  OneSample built{make_model(model, options), {}};
  built.model->eval();
  built.input = make_synthetic_batch(*built.model, options, 1, "mse").input;
  return built;
}

}  // namespace

std::vector<ModelListing> list_models() {
  std::vector<ModelListing> listings;
  for (const auto& entry : model_catalog()) {
    ModelOptions options;
    options.input_shape = entry.default_input_shape;
    auto model = make_model(entry.name, options);
    listings.push_back({entry.name, entry.description, entry.default_input_shape,
                        static_cast<int64_t>(model->parameters().size()), parameter_count(*model)});
  }
  return listings;
}

std::vector<double> zoo_layer_forward_ms(const std::string& model,
                                         const std::vector<int64_t>& input_shape,
                                         int64_t num_classes, int64_t depth, int64_t width,
                                         int64_t batch, const MoeShape& moe,
                                         const DecoderShape& decoder) {
  const ModelOptions options =
      query_options(model, input_shape, num_classes, depth, width, moe, decoder);
  const int threads = torch::get_num_threads();
  torch::set_num_threads(1);
  torch::manual_seed(0);
  const auto built = make_model(model, options);
  const SyntheticBatch data = make_synthetic_batch(*built, options, batch, "mse");
  torch::NoGradGuard no_grad;
  const size_t layers = built->layers().size();
  std::vector<std::vector<double>> samples(layers);
  for (int repetition = 0; repetition < 4; ++repetition) {
    torch::Tensor x = data.input;
    for (size_t i = 0; i < layers; ++i) {
      const auto start = std::chrono::steady_clock::now();
      x = built->forward_layers(x, i, i);
      if (repetition > 0)
        samples[i].push_back(milliseconds(std::chrono::steady_clock::now() - start));
    }
  }
  torch::set_num_threads(threads);
  std::vector<double> medians;
  for (auto& s : samples) {
    std::sort(s.begin(), s.end());
    medians.push_back(s[s.size() / 2]);
  }
  return medians;
}

std::vector<std::string> zoo_layer_names(const std::string& model,
                                         const std::vector<int64_t>& input_shape,
                                         int64_t num_classes, int64_t depth, int64_t width,
                                         const MoeShape& moe, const DecoderShape& decoder) {
  const ModelOptions options =
      query_options(model, input_shape, num_classes, depth, width, moe, decoder);
  std::vector<std::string> names;
  const auto built = make_model(model, options);  // kept alive while its layers are read
  for (const auto& layer : built->layers()) names.push_back(layer.name);
  return names;
}

std::vector<double> zoo_layer_forward_flops(const std::string& model,
                                            const std::vector<int64_t>& input_shape,
                                            int64_t num_classes, int64_t depth, int64_t width,
                                            const MoeShape& moe, const DecoderShape& decoder) {
  const OneSample one = model_with_one_sample(
      model, query_options(model, input_shape, num_classes, depth, width, moe, decoder));
  return layer_forward_flops(*one.model, one.input);
}

std::vector<LayerEntry> zoo_layer_chain(const std::string& model,
                                        const std::vector<int64_t>& input_shape,
                                        int64_t num_classes, int64_t depth, int64_t width,
                                        const MoeShape& moe, const DecoderShape& decoder) {
  const OneSample one = model_with_one_sample(
      model, query_options(model, input_shape, num_classes, depth, width, moe, decoder));
  torch::NoGradGuard no_grad;
  torch::Tensor x = one.input;
  std::vector<LayerEntry> chain;
  const auto& layers = one.model->layers();
  for (size_t i = 0; i < layers.size(); ++i) {
    LayerEntry entry{layers[i].name, layers[i].kind, 0, {}};
    for (const auto& parameter : layers[i].module.ptr()->parameters()) {
      entry.parameters += parameter.numel();
    }
    x = one.model->forward_layers(x, i, i);
    entry.output_shape.assign(x.sizes().begin() + 1, x.sizes().end());
    chain.push_back(std::move(entry));
  }
  return chain;
}

std::string torch_version() { return TORCH_VERSION; }

}  // namespace runtime
