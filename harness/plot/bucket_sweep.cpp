#include <algorithm>
#include <set>
#include <sstream>

#include "common/statistics.h"
#include "harness/plot/figures.h"
#include "harness/plot/style.h"

namespace harness {
namespace {

constexpr const char* kAxis = "ddp.bucket_mb";

// The bucket cap a system ran with: a system's own bucket_mb overrides the sweep's value.
double bucket_of(const PointSamples& point, const SystemSamples& system) {
  if (system.config.is_object() && system.config.contains("system") &&
      system.config["system"].contains("bucket_mb")) {
    return system.config["system"]["bucket_mb"].get<double>();
  }
  return std::stod(coordinate(point.point, kAxis));
}

// What a bucket sweep figure's template needs: titles naming the group and the systems left
// out, a log x axis when the caps span 10x or more, tics at the caps, the plot command.
std::map<std::string, std::string> bucket_sweep_fields(const std::string& experiment,
                                                       const std::string& phase,
                                                       const PointGroup& group,
                                                       const std::vector<std::string>& fixed,
                                                       const std::vector<double>& all_x,
                                                       const std::vector<std::string>& drawn) {
  // Without other sweep axes there is nothing to name; say what the marks are instead.
  std::string subtitle =
      group.label == "default" ? "samples pooled over ranks and repeats" : "points: " + group.label;
  if (!fixed.empty()) {
    std::string names;
    for (const auto& n : fixed) names += (names.empty() ? "" : ", ") + n;
    subtitle += "; not drawn (fixed bucket size): " + names;
  }
  const bool log_x = *std::max_element(all_x.begin(), all_x.end()) >=
                     10 * *std::min_element(all_x.begin(), all_x.end());
  std::string plot = "plot ";
  for (size_t i = 0; i < drawn.size(); ++i) plot += drawn[i] + ", \\\n     ";
  plot += "keyentry with filledcurves lc rgb \"#999999\" title \"p10-p90 band\", \\\n     ";
  plot += "keyentry with linespoints lw 2 pt 7 lc rgb \"#999999\" title \"p50\", \\\n     ";
  plot += "keyentry with points pt 2 ps 1.4 lc rgb \"#999999\" title \"p99\"";
  return {{"title",
           gnuplot_string(experiment + ": " + phase + " latency vs DDP bucket size\n" + subtitle)},
          {"xlabel",
           gnuplot_string(std::string("bucket size cap (MiB") + (log_x ? ", log scale)" : ")"))},
          {"ylabel", gnuplot_string(std::string(phase) + " latency (ms)")},
          {"logscale", log_x ? "set logscale x" : "unset logscale x"},
          {"xtics", xtics_at(all_x)},
          {"plot", plot}};
}

}  // namespace

FigureSet bucket_sweep_figures(const ResultSamples& samples) {
  FigureSet set;
  const auto groups = group_points_except(samples, kAxis);
  bool swept = false;
  for (const auto& group : groups) {
    std::set<std::string> values;
    for (const auto* point : group.points) values.insert(coordinate(point->point, kAxis));
    swept |= values.size() >= 2 && !values.count("");
  }
  if (!swept) {
    set.unfit = "the sweep has no axis ddp.bucket_mb with two or more values";
    return set;
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    const PointGroup& group = groups[g];
    const size_t system_count = samples.manifest.systems.size();
    for (const char* phase : kPhases) {
      std::ostringstream data;
      data << "# " << samples.manifest.experiment << ": " << phase
           << " latency (ms) vs DDP bucket size cap (MiB); points: " << group.label << "\n"
           << "# one block per system (gnuplot index 0, 1, ...), blocks separated by two blank "
              "lines\n"
           << "# columns: bucket_mb p10_ms p50_ms p90_ms p99_ms n\n";
      std::vector<std::string> drawn;  // plot clauses
      std::vector<std::string> fixed;  // systems whose bucket cap does not vary
      std::vector<double> all_x;
      size_t block = 0;
      for (size_t s = 0; s < system_count; ++s) {
        std::vector<std::pair<double, SampleSummary>> rows;
        std::vector<double> p10;
        std::set<double> distinct;
        for (const auto* point : group.points) {
          const SystemSamples& system = point->systems[s];
          auto found = system.phases.find(phase);
          if (found == system.phases.end() || found->second.empty()) continue;
          rows.emplace_back(bucket_of(*point, system), summarize(found->second));
          p10.push_back(percentile(found->second, 10));
          distinct.insert(rows.back().first);
        }
        const std::string& name = samples.manifest.systems[s].name;
        if (distinct.size() < 2) {
          if (!rows.empty()) fixed.push_back(name);
          continue;
        }
        std::vector<size_t> order(rows.size());
        for (size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::sort(order.begin(), order.end(),
                  [&](size_t a, size_t b) { return rows[a].first < rows[b].first; });
        data << (block ? "\n\n" : "") << "# system " << block << ": " << name << "\n";
        for (size_t i : order) {
          const auto& [x, st] = rows[i];
          all_x.push_back(x);
          data << data_number(x) << " " << data_number(p10[i]) << " " << data_number(st.p50) << " "
               << data_number(st.p90) << " " << data_number(st.p99) << " " << st.count << "\n";
        }
        const std::string color = series_color(s);
        const std::string index = " index " + std::to_string(block);
        drawn.push_back("datafile" + index + " using 1:2:4 with filledcurves lc " + color +
                        " notitle");
        drawn.push_back("datafile" + index + " using 1:3 with linespoints lw 2 pt 7 ps 0.9 lc " +
                        color + " title " + gnuplot_string(name));
        drawn.push_back("datafile" + index + " using 1:5 with points pt 2 ps 1.4 lc " + color +
                        " notitle");
        ++block;
      }
      if (drawn.empty()) continue;  // no system ran this group with varying buckets
      Figure figure;
      figure.kind = "bucket_sweep";
      figure.stem = std::string("bucket_sweep_") + phase +
                    (groups.size() > 1 ? "_" + std::to_string(g + 1) : "");
      figure.title = samples.manifest.experiment + ": " + phase + " latency vs bucket size" +
                     (group.label == "default" ? "" : " (" + group.label + ")");
      figure.fields =
          bucket_sweep_fields(samples.manifest.experiment, phase, group, fixed, all_x, drawn);
      figure.data = data.str();
      set.figures.push_back(std::move(figure));
    }
  }
  if (set.figures.empty()) set.unfit = "no system has samples at two or more bucket sizes";
  return set;
}

}  // namespace harness
