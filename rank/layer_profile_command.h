// `harness-rank profile layers` (what `harness profile layers` runs): per-layer times of a
// model in this process, or with co-located copies in lockstep, or one process per pipeline
// stage (runtime/profile/layer_profiler.h), written as the planner's graph.txt and
// profile.json.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/profile/layer_profiler.h"

namespace CLI {
class App;
}

namespace harness {

// `--after-idle-ms`: "1,10,100" -> {1, 10, 100}, "none" -> {}; InputError on anything else
// (gaps positive, within common/limits.h's kMaxIdleGaps and kMaxIdleGapMs).
std::vector<double> parse_idle_gaps(const std::string& text);

// Adds `layers` to the `profile` subcommand.
void add_layer_profile_command(CLI::App& profile, const std::string& executable);

}  // namespace harness
