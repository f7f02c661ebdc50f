// `harness profile`: its `layers` subcommand (harness/layer_profile_command.h) and `comm`
// (collective and send/recv bandwidths, nccl-tests style, and a topology file for the
// planner), and `kind: profile` specs. Compiled into the CLI binary: it drives runtime/ code.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace harness {

void add_profile_command(CLI::App& app, const std::string& executable);

// `harness run` on a `kind: profile` spec (experiments/README.md): validates it with
// file:line:column errors, then profiles into a new results folder. Returns the exit code.
int run_profile_spec(const std::string& path, YAML::Node root,
                     const std::vector<std::string>& overrides, bool dry_run,
                     const std::string& executable);

}  // namespace harness
