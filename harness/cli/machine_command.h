// `harness machine`: the limits of this machine (harness/machine/machine_limits.h), measured
// or read from the cache, printed nccl-tests style and optionally written as JSON.
#pragma once

#include "harness/launch/rank_program.h"

namespace CLI {
class App;
}

namespace harness {

void add_machine_command(CLI::App& app, RankProgram& rank_program);

}  // namespace harness
