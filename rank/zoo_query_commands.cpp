#include "rank/zoo_query_commands.h"

#include <CLI/CLI.hpp>
#include <cstdint>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/input_error.h"
#include "common/json_file.h"
#include "common/torch_python.h"
#include "rank/model_flags.h"
#include "rank/zoo_queries.h"
#include "runtime/device/cuda_devices.h"
#include "runtime/machine/blas_library.h"

namespace harness {
namespace {

using nlohmann::json;

// The options that build one zoo model, and what `harness-rank layers` answers of it.
struct ModelQuery : ModelFlags {
  int64_t forward_ms_batch = 0;  // > 0: also time each layer's forward at this batch
  bool flops = false;            // also each layer's forward FLOPs per sample
  bool chain = false;            // also each layer's kind, parameters and output shape
  bool version = false;          // also what `harness-rank version` answers
};

// What `harness-rank version` prints: the LibTorch, its Python, the GPUs and NCCL, and the BLAS
// this program loads in this environment (what its ranks load too).
json version_answer() {
  const runtime::BlasLibrary blas = runtime::loaded_blas_library();
  return json{{"torch_version", runtime::torch_version()},
              {"torch_python", torch_python()},
              {"cuda_devices", runtime::cuda::device_count()},
              {"nccl", runtime::cuda::built_with_cuda()},
              {"blas", {{"library", blas.name}, {"path", blas.path}}}};
}

void add_models(CLI::App& app) {
  auto* models = app.add_subcommand("models", "The zoo with parameter counts, as JSON");
  models->callback([] {
    json listing = json::array();
    for (const auto& m : runtime::list_models()) {
      listing.push_back({{"name", m.name},
                         {"description", m.description},
                         {"input_shape", m.input_shape},
                         {"tensors", m.tensors},
                         {"parameters", m.parameters}});
    }
    std::cout << json_text(listing) << "\n";
  });
}

void add_layers(CLI::App& app) {
  auto query = std::make_shared<ModelQuery>();
  auto* layers = app.add_subcommand("layers", "A zoo model's layer chain (and times), as JSON");
  add_model_flags(*layers, *query);
  layers->add_option("--forward-ms-batch", query->forward_ms_batch,
                     "Also time each layer's forward on this many samples");
  layers->add_flag("--flops", query->flops, "Also each layer's forward FLOPs per sample");
  layers->add_flag("--chain", query->chain,
                   "Also each layer's kind, parameters and output shape, as \"chain\"");
  // The harness asks its first model question and the version in one process: each process
  // that loads LibTorch costs a third of a second before it does anything.
  layers->add_flag("--version", query->version, "Also what `version` answers, as \"version\"");
  layers->callback([query] {
    const std::vector<int64_t> shape = input_shape_of(*query);
    json answer;
    try {
      const runtime::MoeShape moe = moe_shape_of(*query);
      const runtime::DecoderShape decoder = decoder_shape_of(*query);
      answer["names"] = runtime::zoo_layer_names(query->model, shape, query->num_classes,
                                                 query->depth, query->width, moe, decoder);
      if (query->flops) {
        answer["forward_flops"] = runtime::zoo_layer_forward_flops(
            query->model, shape, query->num_classes, query->depth, query->width, moe, decoder);
      }
      if (query->chain) {
        answer["chain"] = json::array();
        for (const auto& layer :
             runtime::zoo_layer_chain(query->model, shape, query->num_classes, query->depth,
                                      query->width, moe, decoder)) {
          answer["chain"].push_back({{"name", layer.name},
                                     {"kind", layer.kind},
                                     {"parameters", layer.parameters},
                                     {"output_shape", layer.output_shape}});
        }
      }
      if (query->forward_ms_batch > 0) {
        answer["forward_ms"] =
            runtime::zoo_layer_forward_ms(query->model, shape, query->num_classes, query->depth,
                                          query->width, query->forward_ms_batch, moe, decoder);
      }
    } catch (const std::invalid_argument& e) {
      throw InputError(query->model + ": " + e.what());
    }
    if (query->version) answer["version"] = version_answer();
    std::cout << json_text(answer) << "\n";
  });
}

void add_version(CLI::App& app) {
  auto* version = app.add_subcommand("version", "The LibTorch this program runs, as JSON");
  version->callback([] { std::cout << json_text(version_answer()) << "\n"; });
}

}  // namespace

void add_zoo_query_commands(CLI::App& app) {
  add_models(app);
  add_layers(app);
  add_version(app);
}

}  // namespace harness
