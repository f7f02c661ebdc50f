// `harness plot RESULTS_DIR [--kind K]...`: draws the figures of a results folder into
// RESULTS_DIR/plots/ and lists them in plots/figures.json (which report.md indexes). Also
// called by `harness run` for the kinds a spec lists under `plots:`.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace harness {

// Draws `kinds` (every kind when empty). A kind asked by name that does not fit the folder
// prints one line saying why and draws nothing; of every kind, those that do not fit are named
// in one closing line when others were drawn. Returns the number of figures drawn. Throws
// InputError for an unknown kind or a folder that is not a results folder, std::runtime_error when
// gnuplot fails.
size_t run_plots(const std::filesystem::path& directory, const std::vector<std::string>& kinds,
                 std::ostream& out);

void add_plot_command(CLI::App& app);

}  // namespace harness
