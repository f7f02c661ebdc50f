// The gnuplot templates in plots/ (one per figure kind, plus frame.gp around each): what a
// user edits to restyle every figure of a kind. The plot code computes only what depends on
// the data (titles, tics, the plot commands) and fills the templates' {{placeholders}} with it.
#pragma once

#include <filesystem>
#include <map>
#include <string>

namespace harness {

// $HARNESS_PLOTS_DIR when set, else this source tree's plots/ folder.
std::filesystem::path plot_templates_dir();

// plots/NAME.gp with every {{key}} replaced by values.at(key); lines starting with "##" (the
// template's own notes) left out. Throws std::runtime_error when the template cannot be read
// or names a placeholder without a value ("FILE:LINE: unknown placeholder {{key}}").
std::string fill_plot_template(const std::string& name,
                               const std::map<std::string, std::string>& values);

}  // namespace harness
