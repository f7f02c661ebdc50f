#include "harness/cli/models_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "common/input_error.h"
#include "harness/spec/spec.h"

namespace harness {
namespace {

// The shape options of a spec's `model:` that change the chain, as flags.
struct ChainRequest {
  std::string name;
  std::vector<long long> input_shape;
  long long num_classes = 0, depth = 0, width = 0;
};

std::string shape_text(const nlohmann::json& shape) {
  std::string text;
  for (const auto& d : shape)
    text += (text.empty() ? "" : "x") + std::to_string(d.get<long long>());
  return text.empty() ? "-" : text;
}

void print_listing(const nlohmann::json& listing) {
  std::printf("%-10s %10s %14s  %-14s %s\n", "model", "tensors", "parameters", "input",
              "description");
  for (const auto& m : listing) {
    std::printf("%-10s %10lld %14lld  %-14s %s\n", m.at("name").get<std::string>().c_str(),
                m.at("tensors").get<long long>(), m.at("parameters").get<long long>(),
                shape_text(m.at("input_shape")).c_str(),
                m.at("description").get<std::string>().c_str());
  }
}

// The layer chain: the indices `stages: [{layers: "0-3"}]` and `unit: layer` count.
void print_chain(const ChainRequest& request, const nlohmann::json& chain) {
  std::printf("%s: %zu layers (stages: [{layers: \"FIRST-LAST\"}] counts these)\n",
              request.name.c_str(), chain.size());
  std::printf("%5s  %-28s %-22s %14s  %s\n", "layer", "name", "kind", "parameters", "output");
  long long total = 0;
  for (size_t i = 0; i < chain.size(); ++i) {
    const auto& layer = chain[i];
    total += layer.at("parameters").get<long long>();
    std::printf("%5zu  %-28s %-22s %14lld  %s\n", i, layer.at("name").get<std::string>().c_str(),
                layer.at("kind").get<std::string>().c_str(),
                layer.at("parameters").get<long long>(),
                shape_text(layer.at("output_shape")).c_str());
  }
  std::printf("%5s  %-28s %-22s %14lld\n", "", "total", "", total);
}

}  // namespace

void ModelsCommand::add_to(CLI::App& app) {
  auto request = std::make_shared<ChainRequest>();
  auto* models = app.add_subcommand(
      "models", "List the model zoo with parameter counts; with NAME, its layer chain");
  models->add_option("name", request->name, "A zoo model: print its layer chain");
  models
      ->add_option("--input-shape", request->input_shape,
                   "One sample's shape, as model.input_shape (default: the model's)")
      ->delimiter(',');
  models->add_option("--num-classes", request->num_classes, "As model.num_classes");
  models->add_option("--depth", request->depth, "As model.depth");
  models->add_option("--width", request->width, "As model.width");
  models->footer(
      "Examples:\n"
      "  harness models\n"
      "  harness models bert --depth 4 --width 128 --input-shape 32");
  models->callback([this, request] {
    if (request->name.empty()) {
      print_listing(rank_program_.models());
      return;
    }
    ModelConfig model;
    model.name = request->name;
    model.input_shape = request->input_shape;
    model.num_classes = request->num_classes;
    model.depth = request->depth;
    model.width = request->width;
    print_chain(*request, rank_program_.layer_chain(model));
  });
}

}  // namespace harness
