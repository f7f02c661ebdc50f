// The flags that build one zoo model in the rank program's commands (`harness-rank layers`,
// `profile layers`, `spmd-times`), as the harness writes them (harness/spec/spec.h,
// rank_model_flags).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/models/model_catalog.h"

namespace CLI {
class App;
}

namespace harness {

struct ModelFlags {
  std::string model;
  std::string input_shape;                        // "3,64,64"; empty: the model's default
  int64_t num_classes = 0, depth = 0, width = 0;  // 0: the model's default
  std::string moe;      // EXPERTS,TOP_K,CAPACITY_FACTOR,EVERY (mixture-of-experts models)
  std::string decoder;  // HEADS,KV_HEADS,VOCAB (llama)
};

// `model_required` false where another flag can name the model instead (`profile layers
// --torchscript`).
void add_model_flags(CLI::App& command, ModelFlags& flags, bool model_required = true);

// --input-shape's "3,64,64" -> {3, 64, 64} (empty: the model's default); InputError on anything
// but positive integers.
std::vector<int64_t> input_shape_of(const ModelFlags& flags);

// The shapes the flags' text gives: --moe's and --decoder's (the zoo's defaults where not given).
// std::invalid_argument for malformed text.
runtime::MoeShape moe_shape_of(const ModelFlags& flags);
runtime::DecoderShape decoder_shape_of(const ModelFlags& flags);

// The flags as arguments again, for another process of the same command (those left at their
// defaults left out).
std::vector<std::string> model_flag_arguments(const ModelFlags& flags);

}  // namespace harness
