#include "rank/model_flags.h"

#include <CLI/CLI.hpp>

#include "common/input_error.h"
#include "common/limits.h"
#include "common/text_util.h"

namespace harness {

void add_model_flags(CLI::App& command, ModelFlags& flags, bool model_required) {
  command.add_option("--model", flags.model, "Zoo model (harness models)")
      ->required(model_required);
  command.add_option("--input-shape", flags.input_shape, "One sample's shape, e.g. 3,64,64");
  command.add_option("--num-classes", flags.num_classes, "Output width (0: model default)")
      ->check(CLI::Range(0LL, kMaxCount));
  command.add_option("--depth", flags.depth, "Layers or blocks (0: model default)")
      ->check(CLI::Range(0LL, kMaxModelDepth));
  command.add_option("--width", flags.width, "Width (0: model default)")
      ->check(CLI::Range(0LL, kMaxModelWidth));
  command.add_option("--moe", flags.moe, "Mixtures: EXPERTS,TOP_K,CAPACITY_FACTOR,EVERY");
  command.add_option("--decoder", flags.decoder, "llama: HEADS,KV_HEADS,VOCAB (0: default)");
}

std::vector<int64_t> input_shape_of(const ModelFlags& flags) {
  std::vector<int64_t> shape;
  if (flags.input_shape.empty()) return shape;
  for (const auto& part : split(flags.input_shape, ',')) {
    try {
      size_t used = 0;
      const long long d = std::stoll(part, &used);
      if (used != part.size() || d < 1) throw std::invalid_argument(part);
      shape.push_back(d);
    } catch (const std::exception&) {
      throw InputError("--input-shape '" + flags.input_shape +
                       "': expected positive integers, e.g. 3,224,224");
    }
  }
  return shape;
}

runtime::MoeShape moe_shape_of(const ModelFlags& flags) {
  return flags.moe.empty() ? runtime::MoeShape{} : runtime::parse_moe_flag(flags.moe);
}

runtime::DecoderShape decoder_shape_of(const ModelFlags& flags) {
  return flags.decoder.empty() ? runtime::DecoderShape{}
                               : runtime::parse_decoder_flag(flags.decoder);
}

std::vector<std::string> model_flag_arguments(const ModelFlags& flags) {
  return {"--model",       flags.model,
          "--input-shape", flags.input_shape,
          "--num-classes", std::to_string(flags.num_classes),
          "--depth",       std::to_string(flags.depth),
          "--width",       std::to_string(flags.width),
          "--moe",         flags.moe,
          "--decoder",     flags.decoder};
}

}  // namespace harness
