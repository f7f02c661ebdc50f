// Figures drawn by gnuplot. Each figure is three files a user can restyle and redraw by hand
// (`gnuplot NAME.gp` in the plots folder): NAME.dat (the numbers), NAME.gp (the script, which
// writes NAME.png with pngcairo and NAME.svg with svg), and the two images. NAME.gp is the
// kind's template from plots/ (harness/plot/templates.h) inside plots/frame.gp, filled.
#pragma once

#include <filesystem>
#include <map>
#include <string>

namespace harness {

struct Figure {
  std::string kind;    // bucket_sweep, sweep, scaling, cdf, planner, ...
  std::string layout;  // the template, plots/LAYOUT.gp; empty: plots/KIND.gp
  std::string stem;    // file name without extension
  std::string title;   // one line, for report.md
  std::string data;    // content of STEM.dat
  // The values of the template's placeholders: what depends on the data.
  std::map<std::string, std::string> fields;
  int width = 1000;
  int height = 650;
};

// A gnuplot string literal (double-quoted; backslashes and quotes escaped, line breaks as \n).
std::string gnuplot_string(const std::string& text);

// The complete STEM.gp: plots/frame.gp around the figure's template, both filled.
std::string gnuplot_script(const Figure& figure);

// Writes STEM.dat and STEM.gp into `directory` and runs gnuplot there (the program named by
// $HARNESS_GNUPLOT, else `gnuplot` on the PATH). Throws std::runtime_error with gnuplot's
// output when it fails or leaves an image missing or empty.
void render_figure(const Figure& figure, const std::filesystem::path& directory);

}  // namespace harness
