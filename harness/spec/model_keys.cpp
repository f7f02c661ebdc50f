#include "harness/spec/model_keys.h"

#include <stdexcept>

#include "common/limits.h"
#include "runtime/models/model_catalog.h"

namespace harness {

void read_zoo_shape_keys(MapReader& model, ModelConfig& config) {
  std::vector<long long> default_shape = {3, 224, 224};
  if (const runtime::ModelEntry* entry = runtime::find_model(config.name)) {
    default_shape.assign(entry->default_input_shape.begin(), entry->default_input_shape.end());
  }
  config.input_shape = model.get_int_list("input_shape", default_shape, 1);
  config.num_classes = model.get_int("num_classes", 0, 0, kMaxCount);
  config.depth = model.get_int("depth", 0, 0, kMaxModelDepth);
  config.width = model.get_int("width", 0, 0, kMaxModelWidth);
  // Mixture-of-experts models (the zoo's rule decides which take these keys).
  const runtime::MoeShape moe_default;
  config.moe.experts = model.get_int("experts", moe_default.experts, 1, 1024);
  config.moe.top_k = model.get_int("top_k", moe_default.top_k, 1, 1024);
  config.moe.capacity_factor =
      model.get_double("capacity_factor", moe_default.capacity_factor, 0.0);
  config.moe.every = model.get_int("moe_every", moe_default.every, 1, 1024);
  // A decoder's heads and vocabulary (llama's; the zoo's rule decides, as for the mixture).
  config.decoder.heads = model.get_int("heads", 0, 0, kMaxModelWidth);
  config.decoder.kv_heads = model.get_int("kv_heads", 0, 0, kMaxModelWidth);
  config.decoder.vocab = model.get_int("vocab", 0, 0, kMaxModelWidth);
}

void check_zoo_shape(MapReader& model, const ModelConfig& config) {
  if (!model.ok()) return;
  try {
    runtime::check_model_options(
        config.name, std::vector<int64_t>(config.input_shape.begin(), config.input_shape.end()),
        config.depth, config.width, config.moe, config.decoder);
  } catch (const std::invalid_argument& e) {
    model.report_map(e.what());
  }
}

}  // namespace harness
