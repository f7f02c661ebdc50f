#include "harness/cli/models_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

namespace harness {

void ModelsCommand::add_to(CLI::App& app) {
  auto* models = app.add_subcommand("models", "List the model zoo with parameter counts");
  models->footer(
      "Example:\n"
      "  harness models");
  models->callback([this] {
    const nlohmann::json& listing = rank_program_.models();
    std::printf("%-10s %10s %14s  %-14s %s\n", "model", "tensors", "parameters", "input",
                "description");
    for (const auto& m : listing) {
      std::string shape;
      for (const auto& d : m.at("input_shape")) {
        shape += (shape.empty() ? "" : "x") + std::to_string(d.get<long long>());
      }
      std::printf("%-10s %10lld %14lld  %-14s %s\n", m.at("name").get<std::string>().c_str(),
                  m.at("tensors").get<long long>(), m.at("parameters").get<long long>(),
                  shape.c_str(), m.at("description").get<std::string>().c_str());
    }
  });
}

}  // namespace harness
