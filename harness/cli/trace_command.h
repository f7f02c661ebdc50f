// `harness trace RESULTS_DIR [--point P] [--system S] [--repeat K] [--output FILE]`: merges each
// run's per-rank Chrome traces into one trace.json in the run's raw folder (timestamps shifted
// so the earliest event is at 0; opens in Perfetto or chrome://tracing) and prints, and writes
// beside it as trace_breakdown.md / trace_breakdown.json, the compute / communication / idle
// breakdown per rank.
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>

namespace CLI {
class App;
}

namespace harness {

struct TraceOptions {
  std::string point;   // point id (p000) or label; "" for every point
  std::string system;  // "" for every system
  std::optional<long long> repeat;
  std::filesystem::path output;  // the merged trace of the one selected run goes here instead
};

// Throws InputError (one line) for a missing folder, a folder without traces, filters that
// match nothing, --output with several runs, or a malformed trace; nothing is written then.
// Warnings (events not counted, ranks without a trace) go to `err`. Returns 0.
int run_trace(const std::filesystem::path& directory, const TraceOptions& options,
              std::ostream& out, std::ostream& err);

void add_trace_command(CLI::App& app);

}  // namespace harness
