#include "rank/model_flags.h"

#include <CLI/CLI.hpp>

#include "common/input_error.h"
#include "common/limits.h"
#include "common/text_util.h"

namespace harness {

void add_model_flags(CLI::App& command, ModelFlags& flags, bool model_required) {
  command.add_option("--model", flags.model, "Zoo model (harness models)")
      ->required(model_required);
  command.add_option("--input-shape", flags.input_shape, "One sample's shape, e.g. 3,64,64")
      ->check(CLI::Validator(
          [](const std::string& text) {
            return text.empty() ? std::string("expected positive integers, e.g. 3,224,224")
                                : std::string();
          },
          "SHAPE"));
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
  std::vector<std::string> arguments;
  for (const auto& [flag, text] :
       {std::pair<const char*, const std::string&>{"--model", flags.model},
        {"--input-shape", flags.input_shape},
        {"--moe", flags.moe},
        {"--decoder", flags.decoder}}) {
    if (!text.empty()) arguments.insert(arguments.end(), {flag, text});
  }
  for (const auto& [flag, value] :
       {std::pair<const char*, int64_t>{"--num-classes", flags.num_classes},
        {"--depth", flags.depth},
        {"--width", flags.width}}) {
    if (value > 0) arguments.insert(arguments.end(), {flag, std::to_string(value)});
  }
  return arguments;
}

}  // namespace harness
