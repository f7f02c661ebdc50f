// `harness actions MEASURED SIMULATED... [--system S] [--json FILE]`: a pipeline run against
// its simulation, rank by rank and action kind by action kind (harness/analysis/
// action_comparison.h): where the simulator's per-action times and waits differ from the run's.
// Prints the markdown; --json writes the figures too.
#pragma once

namespace CLI {
class App;
}

namespace harness {

void add_actions_command(CLI::App& app);

}  // namespace harness
