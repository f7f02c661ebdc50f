// `harness profile layers` (per-layer times of a model, written as the planner's graph.txt)
// and `harness profile comm` (collective and send/recv bandwidths, nccl-tests style, and a
// topology file for the planner). Compiled into the CLI binary: it drives runtime/ code.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace harness {

void add_profile_command(CLI::App& app, const std::string& executable);

}  // namespace harness
