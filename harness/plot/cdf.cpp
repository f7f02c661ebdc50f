#include <algorithm>
#include <sstream>

#include "harness/plot/figures.h"
#include "harness/plot/style.h"

namespace harness {

FigureSet cdf_figures(const ResultSamples& samples) {
  FigureSet set;
  for (const auto& point : samples.points) {
    std::ostringstream data;
    data << "# " << samples.manifest.experiment
         << ": empirical CDF of iteration latency; point: " << point.point.label
         << "\n# one block per system (gnuplot index 0, 1, ...), blocks separated by two blank "
            "lines\n"
         << "# columns: iteration_ms fraction (of iterations at most that latency); the first "
            "row of a block starts the curve at 0\n";
    std::string plot;
    size_t block = 0;
    for (size_t s = 0; s < point.systems.size(); ++s) {
      auto found = point.systems[s].phases.find("iteration");
      if (found == point.systems[s].phases.end() || found->second.empty()) continue;
      std::vector<double> values = found->second;
      std::sort(values.begin(), values.end());
      const std::string& name = point.systems[s].name;
      data << (block ? "\n\n" : "") << "# system " << block << ": " << name << "\n"
           << data_number(values.front()) << " 0\n";
      // With `steps`, each row holds its fraction until the next row's x: the ECDF.
      for (size_t i = 0; i < values.size(); ++i) {
        data << data_number(values[i]) << " "
             << data_number(static_cast<double>(i + 1) / static_cast<double>(values.size()))
             << "\n";
      }
      plot += std::string(block ? ", \\\n     " : "plot ") + "datafile index " +
              std::to_string(block) + " using 1:2 with steps lw 2 lc " + series_color(s) +
              " title " + gnuplot_string(name + " (n=" + std::to_string(values.size()) + ")");
      ++block;
    }
    if (block == 0) continue;
    Figure figure;
    figure.kind = "cdf";
    figure.stem = "cdf_" + point.point.id;
    figure.title =
        samples.manifest.experiment + ": CDF of iteration latency (" + point.point.label + ")";
    figure.fields = {
        {"title", gnuplot_string(samples.manifest.experiment +
                                 ": distribution of iteration latency\npoint: " +
                                 point.point.label + " (samples pooled over ranks and repeats)")},
        {"plot", plot}};
    figure.data = data.str();
    set.figures.push_back(std::move(figure));
  }
  if (set.figures.empty()) set.unfit = "no complete run with iteration samples";
  return set;
}

}  // namespace harness
