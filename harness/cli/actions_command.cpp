#include "harness/cli/actions_command.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/json_file.h"
#include "harness/analysis/action_comparison.h"

namespace harness {

namespace fs = std::filesystem;

namespace {

struct ActionsOptions {
  std::string measured;
  std::vector<std::string> simulated;
  std::string system;
  std::string json_file;
};

// Everything read and compared before the one file is written.
void run_actions(const ActionsOptions& options) {
  if (!options.json_file.empty()) {
    const fs::path file(options.json_file);
    if (fs::is_directory(file)) {
      throw InputError("--json " + options.json_file + ": is a folder; give the file to write");
    }
    const fs::path parent = file.has_parent_path() ? file.parent_path() : fs::path(".");
    if (!fs::is_directory(parent)) {
      throw InputError("--json " + options.json_file + ": no folder " + parent.string());
    }
  }
  const std::vector<fs::path> simulated(options.simulated.begin(), options.simulated.end());
  const auto comparisons = compare_actions(options.measured, simulated, options.system);
  std::cout << actions_markdown(comparisons);
  if (!options.json_file.empty()) {
    write_file_atomic(options.json_file, json_text(actions_json(comparisons), 2) + "\n");
  }
}

}  // namespace

void add_actions_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "actions",
      "Compare a pipeline run with its simulation, rank by rank and action kind by action kind "
      "(F, B or I, W, sends, gradient sum, step, waiting)");
  sub->footer(
      "Example:\n"
      "  harness actions results/real/<name>/<stamp> results/sim/<name>/<stamp>\n"
      "Several simulated folders (simulations of the same run) are averaged.");
  auto options = std::make_shared<ActionsOptions>();
  sub->add_option("measured", options->measured, "Results folder of `harness run`")->required();
  sub->add_option("simulated", options->simulated,
                  "Results folders of `harness simulate` of the same systems (with traces)")
      ->required();
  sub->add_option("--system", options->system, "Only this system");
  sub->add_option("--json", options->json_file, "Also write the comparison here as JSON");
  sub->callback([options]() { run_actions(*options); });
}

}  // namespace harness
