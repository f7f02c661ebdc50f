// `harness profile`: its `layers` subcommand (measured by the rank program:
// rank/layer_profile_command.h) and `comm` (collective and send/recv bandwidths, nccl-tests
// style, and a topology file for the planner), and `kind: profile` specs.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "harness/launch/rank_program.h"

namespace CLI {
class App;
}

namespace harness {

void add_profile_command(CLI::App& app, RankProgram& rank_program);

// `harness run` on a `kind: profile` spec (experiments/README.md): validates it with
// file:line:column errors, then profiles into a new results folder. Returns the exit code.
int run_profile_spec(const std::string& path, YAML::Node root,
                     const std::vector<std::string>& overrides, bool dry_run,
                     RankProgram& rank_program);

}  // namespace harness
