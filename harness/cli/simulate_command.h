// `harness simulate SPEC [--set k=v]... [--dry-run]`: a `kind: simulate` spec run on its own
// (harness/study/simulate_study.h).
#pragma once

namespace CLI {
class App;
}

namespace harness {

void add_simulate_command(CLI::App& app);

}  // namespace harness
