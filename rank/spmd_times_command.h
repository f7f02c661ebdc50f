// `harness-rank spmd-times` (what a `kind: spmd` system with `compute: measured` asks before
// its search): one rank's forward and backward time of every operator of each plan given,
// each run alone at the model's shapes (runtime/profile/spmd_operator_times.h), printed as one
// JSON document on stdout. A bad model, option or plan is one line on stderr, exit 2.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace harness {

// `executable`: this program, which starts the co-located copies.
void add_spmd_times_command(CLI::App& app, const std::string& executable);

}  // namespace harness
