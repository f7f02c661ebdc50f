#include "harness/cli/machine_command.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/json_file.h"
#include "harness/machine/machine_limits.h"

namespace harness {
namespace {

struct MachineRequest {
  bool remeasure = false;
  std::string out;
};

}  // namespace

void add_machine_command(CLI::App& app, RankProgram& rank_program) {
  auto request = std::make_shared<MachineRequest>();
  auto* sub = app.add_subcommand(
      "machine", "This machine's limits: GEMM GFLOP/s, memory bandwidth, all-reduce busbw");
  sub->footer(
      "Example:\n"
      "  harness machine            # measured once, then cached; --remeasure measures again");
  sub->add_flag("--remeasure", request->remeasure, "Measure again instead of using the cache");
  sub->add_option("--out", request->out, "Also write the figures as JSON to this file");
  sub->callback([request, &rank_program] {
    // Checked before the minutes of measuring, not after.
    if (!request->out.empty()) check_output_file(request->out, "--out");
    const nlohmann::json limits = machine_limits(rank_program, request->remeasure);
    std::cout << render_machine_limits(limits);
    std::cout << "# cached in " << machine_cache_path().string() << "\n";
    if (!request->out.empty()) {
      try {
        write_file_atomic(request->out, json_text(limits, 2) + "\n");
      } catch (const std::exception& e) {
        throw InputError("--out " + request->out + ": " + e.what());
      }
    }
  });
}

}  // namespace harness
