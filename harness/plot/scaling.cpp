#include <algorithm>
#include <set>
#include <sstream>

#include "common/statistics.h"
#include "harness/plot/figures.h"
#include "harness/plot/style.h"

namespace harness {
namespace {

constexpr const char* kAxis = "run.world_size";

// Samples per rank per iteration, from what the ranks were given; 0 when unknown.
long long batch_of(const PointSamples& point, const SystemSamples& system) {
  if (system.config.is_object() && system.config.contains("model")) {
    return system.config["model"].value("batch_size", 0LL);
  }
  const std::string swept = coordinate(point.point, "model.batch_size");
  return swept.empty() ? 0 : std::stoll(swept);
}

}  // namespace

FigureSet scaling_figures(const ResultSamples& samples) {
  FigureSet set;
  const auto groups = group_points_except(samples, kAxis);
  for (size_t g = 0; g < groups.size(); ++g) {
    const PointGroup& group = groups[g];
    std::set<long long> sizes;
    for (const auto* point : group.points) sizes.insert(point->point.world_size);
    if (sizes.size() < 2 || coordinate(group.points.front()->point, kAxis).empty()) continue;

    std::ostringstream data;
    data << "# " << samples.manifest.experiment
         << ": iteration time (ms) and throughput vs world size; points: " << group.label
         << "\n# one block per system (gnuplot index 0, 1, ...), blocks separated by two blank "
            "lines\n"
         << "# throughput = world_size x batch_size / mean iteration time (samples/s; "
            "iterations/s x world size when the batch is unknown)\n"
         << "# columns: world_size p10_ms p50_ms p90_ms mean_ms throughput n\n";
    std::string time_plot, throughput_plot;
    std::vector<double> all_x;
    bool batch_known = true;
    size_t block = 0;
    for (size_t s = 0; s < samples.manifest.systems.size(); ++s) {
      std::vector<const PointSamples*> points;
      for (const auto* point : group.points) {
        auto found = point->systems[s].phases.find("iteration");
        if (found != point->systems[s].phases.end() && !found->second.empty()) {
          points.push_back(point);
        }
      }
      if (points.empty()) continue;
      std::sort(points.begin(), points.end(), [](const auto* a, const auto* b) {
        return a->point.world_size < b->point.world_size;
      });
      const std::string& name = samples.manifest.systems[s].name;
      data << (block ? "\n\n" : "") << "# system " << block << ": " << name << "\n";
      for (const auto* point : points) {
        const std::vector<double>& values = point->systems[s].phases.at("iteration");
        const SampleSummary st = summarize(values);
        const long long batch = batch_of(*point, point->systems[s]);
        batch_known &= batch > 0;
        const double throughput = static_cast<double>(point->point.world_size) *
                                  static_cast<double>(batch > 0 ? batch : 1) * 1000.0 / st.mean;
        all_x.push_back(static_cast<double>(point->point.world_size));
        data << point->point.world_size << " " << data_number(percentile(values, 10)) << " "
             << data_number(st.p50) << " " << data_number(st.p90) << " " << data_number(st.mean)
             << " " << data_number(throughput) << " " << st.count << "\n";
      }
      const std::string color = series_color(s);
      const std::string index = "datafile index " + std::to_string(block);
      const std::string separator = block ? ", \\\n     " : "plot ";
      time_plot += separator + index + " using 1:3:2:4 with yerrorlines lw 2 pt 7 lc " + color +
                   " title " + gnuplot_string(name);
      throughput_plot += separator + index + " using 1:6 with linespoints lw 2 pt 7 lc " + color +
                         " title " + gnuplot_string(name);
      ++block;
    }
    if (block == 0) continue;
    Figure figure;
    figure.kind = "scaling";
    figure.stem = "scaling" + (groups.size() > 1 ? "_" + std::to_string(g + 1) : "");
    figure.title = samples.manifest.experiment + ": iteration time and throughput vs world size (" +
                   group.label + ")";
    figure.width = 1300;
    figure.height = 560;
    figure.fields = {
        {"title", gnuplot_string(samples.manifest.experiment + ": scaling with world size\n" +
                                 (group.label == "default" ? "samples pooled over ranks and repeats"
                                                           : "points: " + group.label))},
        {"xtics", xtics_at(all_x)},
        {"time_plot", time_plot},
        {"throughput_ylabel",
         gnuplot_string(batch_known ? "throughput (samples/s)"
                                    : "throughput (iterations/s x world size)")},
        {"throughput_plot", throughput_plot}};
    figure.data = data.str();
    set.figures.push_back(std::move(figure));
  }
  if (set.figures.empty()) {
    set.unfit = "the sweep has no axis run.world_size with two or more values";
  }
  return set;
}

}  // namespace harness
