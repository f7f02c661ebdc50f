#include "harness/cli/simulate_command.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "common/input_error.h"
#include "harness/spec/spec.h"
#include "harness/study/simulate_study.h"

namespace harness {

void add_simulate_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "simulate", "Simulate a cluster (kind: simulate spec): DDP, accumulation, pipelines");
  sub->footer(
      "Example:\n"
      "  harness simulate experiments/simulate_scaling.yaml");
  struct Options {
    std::string spec_path;
    std::vector<std::string> overrides;
    bool dry_run = false;
  };
  const auto options = std::make_shared<Options>();
  sub->add_option("spec", options->spec_path, "Simulation spec (YAML, kind: simulate)")->required();
  sub->add_option("--set", options->overrides, "Override a spec value: key.path=value (repeatable)")
      ->take_all()
      ->allow_extra_args(false);
  sub->add_flag("--dry-run", options->dry_run, "Print the expanded matrix and exit");
  sub->callback([options]() {
    int code = 0;
    try {
      code = run_simulate_spec(options->spec_path, parse_yaml_file(options->spec_path),
                               options->overrides, options->dry_run, std::cout);
    } catch (const InputError& e) {
      std::cerr << "error: " << e.what() << '\n';
      code = 2;
    }
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace harness
