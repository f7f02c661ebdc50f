// `harness profile layers`: per-layer times of a model in this process, or with co-located
// copies in lockstep, or one process per pipeline stage (runtime/layer_profiler.h), written
// as the planner's graph.txt and profile.json. Compiled into the CLI binary: it drives
// runtime/ code.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/profile/layer_profiler.h"

namespace CLI {
class App;
}

namespace harness {

// "3,64,64" -> {3, 64, 64}; InputError on anything but positive integers.
std::vector<int64_t> parse_shape(const std::string& text);

// Profiles `request` here under the heap policy `heap` and writes into `out_dir` (a
// `kind: profile` spec's results folder). Returns the exit code.
int run_layer_profile(const runtime::LayerProfileRequest& request, const std::string& out_dir,
                      const std::string& heap);

// Adds `layers` to the `profile` subcommand.
void add_layer_profile_command(CLI::App& profile, const std::string& executable);

}  // namespace harness
