// `harness report RESULTS_DIR`: rebuilds summary.json, table.md and table.csv from the raw
// samples with the very code `harness run` wrote them with (write_summary_files), so the
// bytes are the same, and writes report.md, an index of every table and figure of the folder.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>

namespace CLI {
class App;
}

namespace harness {

// report.md for the folder as it is now: tables, figures (plots/figures.json, else the PNGs
// in plots/), planner outputs, run status and the points of the sweep.
std::string render_report_index(const std::filesystem::path& directory);

// Rebuilds the tables (train folders) and writes report.md. Throws InputError when the folder
// is neither a train nor a plan results folder. Returns the exit code (0).
int run_report(const std::filesystem::path& directory, std::ostream& out);

void add_report_command(CLI::App& app);

}  // namespace harness
