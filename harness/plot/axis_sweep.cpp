// Latency vs one swept axis: the bucket_sweep kind (ddp.bucket_mb, where a system's own cap
// overrides the sweep's), the sweep kind (every other numeric axis with two or more values:
// bandwidth, micro-batches, batch size, ...) and the bandwidth kind (the rate of the link
// between emulated machines, with the speedup over the slowest level beside it). All draw
// with plots/axis_sweep.gp.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <set>
#include <sstream>

#include "common/statistics.h"
#include "harness/plot/figures.h"
#include "harness/plot/style.h"

namespace harness {
namespace {

constexpr const char* kBucketAxis = "ddp.bucket_mb";

// One swept axis as a figure's x: its path, how the axis and the figure kind are named, and
// the value a system ran with at a point.
struct SweepAxisView {
  std::string path;
  std::string kind;       // bucket_sweep or sweep
  std::string label;      // x axis label, without the scale note
  std::string subject;    // "DDP bucket size" in titles
  std::string fixed_why;  // why a system whose value does not vary is not drawn
  // NaN: the point is not drawn (one machine on loopback in a bandwidth figure).
  std::function<double(const PointSamples&, const SystemSamples&)> value_of;
  // Instead of latency: the speedup of each level over the system's lowest x (the iteration
  // phase only).
  bool speedup = false;
};

// The bucket cap a system ran with, from its worker config (a system's own bucket_mb overrides
// the sweep's value): system.gradients.bucket_mb, or system.bucket_mb in a results folder
// written before the system description had a gradients section; else the sweep's coordinate.
double bucket_of(const PointSamples& point, const SystemSamples& system) {
  if (system.config.is_object() && system.config.contains("system")) {
    const nlohmann::json& described = system.config["system"];
    if (described.contains("gradients") && described["gradients"].contains("bucket_mb")) {
      return described["gradients"]["bucket_mb"].get<double>();
    }
    if (described.contains("bucket_mb")) return described["bucket_mb"].get<double>();
  }
  return std::stod(coordinate(point.point, kBucketAxis));
}

// The coordinate as a number; false for a value that is not one ("gpipe", "auto").
bool numeric_coordinate(const ManifestPoint& point, const std::string& axis, double& value) {
  const std::string text = coordinate(point, axis);
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size();
}

// "bucket size cap (MiB, log scale)", "cluster.inter_bandwidth (log scale)".
std::string scale_noted(const std::string& label, bool log_x) {
  if (!log_x) return label;
  if (!label.empty() && label.back() == ')')
    return label.substr(0, label.size() - 1) + ", log scale)";
  return label + " (log scale)";
}

// What a bucket sweep figure's template needs: titles naming the group and the systems left
// out, a log x axis when the caps span 10x or more, tics at the caps, the plot command.
std::map<std::string, std::string> axis_sweep_fields(
    const SweepAxisView& axis, const std::string& experiment, const std::string& phase,
    const PointGroup& group, const std::vector<std::string>& fixed,
    const std::vector<double>& all_x, const std::vector<std::string>& drawn) {
  // Without other sweep axes there is nothing to name; say what the marks are instead.
  std::string subtitle =
      group.label == "default" ? "samples pooled over ranks and repeats" : "points: " + group.label;
  if (!fixed.empty()) {
    std::string names;
    for (const auto& n : fixed) names += (names.empty() ? "" : ", ") + n;
    subtitle += "; not drawn (" + axis.fixed_why + "): " + names;
  }
  const bool log_x = *std::max_element(all_x.begin(), all_x.end()) >=
                     10 * *std::min_element(all_x.begin(), all_x.end());
  const std::string measure = axis.speedup ? "speedup over the slowest level" : "latency";
  std::string plot = "plot ";
  for (size_t i = 0; i < drawn.size(); ++i) plot += drawn[i] + ", \\\n     ";
  plot += "keyentry with filledcurves lc rgb \"#999999\" title \"p10-p90 band\", \\\n     ";
  plot += "keyentry with linespoints lw 2 pt 7 lc rgb \"#999999\" title \"p50\", \\\n     ";
  plot += "keyentry with points pt 2 ps 1.4 lc rgb \"#999999\" title \"p99\"";
  return {{"title", gnuplot_string(experiment + ": " + phase + " " + measure + " vs " +
                                   axis.subject + "\n" + subtitle)},
          {"xlabel", gnuplot_string(scale_noted(axis.label, log_x))},
          {"ylabel", gnuplot_string(axis.speedup ? std::string(phase) + " speedup (x)"
                                                 : std::string(phase) + " latency (ms)")},
          {"logscale", log_x ? "set logscale x" : "unset logscale x"},
          {"xtics", xtics_at(all_x)},
          {"plot", plot}};
}

// Figures of latency vs `axis` (swept with two or more values), appended to `set`.
void add_axis_sweep_figures(const ResultSamples& samples, const SweepAxisView& axis,
                            FigureSet& set) {
  const auto groups = group_points_except(samples, axis.path);
  for (size_t g = 0; g < groups.size(); ++g) {
    const PointGroup& group = groups[g];
    const size_t system_count = samples.manifest.systems.size();
    for (const char* phase : kPhases) {
      if (axis.speedup && std::string(phase) != "iteration") continue;
      std::ostringstream data;
      data << "# " << samples.manifest.experiment << ": " << phase
           << (axis.speedup ? " speedup over the system's slowest level" : " latency (ms)")
           << " vs " << axis.label << "; points: " << group.label << "\n"
           << "# one block per system (gnuplot index 0, 1, ...), blocks separated by two blank "
              "lines\n"
           << (axis.speedup
                   ? "# columns: " + axis.path +
                         " p50_first/p90 p50_first/p50 p50_first/p10 p50_first/p99 n (p50_first: "
                         "the p50 at the system's lowest " +
                         axis.path + ")\n"
                   : "# columns: " + axis.path + " p10_ms p50_ms p90_ms p99_ms n\n");
      std::vector<std::string> drawn;  // plot clauses
      std::vector<std::string> fixed;  // systems whose value does not vary
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
          const double x = axis.value_of(*point, system);
          if (std::isnan(x)) continue;
          rows.emplace_back(x, summarize(found->second));
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
        const double first_p50 = rows[order.front()].second.p50;
        for (size_t i : order) {
          const auto& [x, st] = rows[i];
          all_x.push_back(x);
          if (axis.speedup) {
            data << data_number(x) << " " << data_number(first_p50 / st.p90) << " "
                 << data_number(first_p50 / st.p50) << " " << data_number(first_p50 / p10[i]) << " "
                 << data_number(first_p50 / st.p99) << " " << st.count << "\n";
            continue;
          }
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
      if (drawn.empty()) continue;  // no system ran this group with varying values
      Figure figure;
      figure.kind = axis.kind;
      figure.layout = "axis_sweep";
      // bucket_sweep_<phase>[_<group>]; sweep_<axis>_<phase>[_<group>]
      std::string axis_name = axis.path;
      std::replace(axis_name.begin(), axis_name.end(), '.', '_');
      figure.stem = axis.kind + (axis.kind == "sweep" ? "_" + axis_name : "") +
                    (axis.speedup ? "_speedup" : "") + "_" + phase +
                    (groups.size() > 1 ? "_" + std::to_string(g + 1) : "");
      figure.title = samples.manifest.experiment + ": " + phase +
                     (axis.speedup ? " speedup vs " : " latency vs ") + axis.subject +
                     (group.label == "default" ? "" : " (" + group.label + ")");
      figure.fields =
          axis_sweep_fields(axis, samples.manifest.experiment, phase, group, fixed, all_x, drawn);
      figure.data = data.str();
      set.figures.push_back(std::move(figure));
    }
  }
}

// The numeric axes of the sweep that take two or more values, in the spec's order.
std::vector<std::string> numeric_swept_axes(const ResultSamples& samples) {
  std::vector<std::string> axes;
  if (samples.points.empty()) return axes;
  for (const auto& [axis, first_value] : samples.points.front().point.coordinates) {
    std::set<double> values;
    bool numeric = true;
    for (const auto& point : samples.points) {
      double value = 0;
      numeric &= numeric_coordinate(point.point, axis, value);
      values.insert(value);
    }
    if (numeric && values.size() >= 2) axes.push_back(axis);
  }
  return axes;
}

// The swept axis that sets the emulated link: the bandwidth itself, or the whole cluster map.
std::string bandwidth_axis(const ResultSamples& samples) {
  if (samples.points.empty()) return "";
  for (const auto& [axis, value] : samples.points.front().point.coordinates) {
    if (axis == "cluster" || axis.starts_with("cluster.network.inter_machine.bandwidth") ||
        axis == "cluster.machines") {
      return axis;
    }
  }
  return "";
}

}  // namespace

FigureSet bandwidth_figures(const ResultSamples& samples) {
  FigureSet set;
  const std::string axis = bandwidth_axis(samples);
  std::set<double> rates;
  for (const auto& point : samples.points) {
    if (point.point.machines > 1 && point.point.inter_machine_bits_per_s) {
      rates.insert(*point.point.inter_machine_bits_per_s);
    }
  }
  if (axis.empty() || rates.size() < 2) {
    set.unfit =
        "the sweep has no two or more inter-machine bandwidths "
        "(cluster.network.inter_machine.bandwidth)";
    return set;
  }
  // Mbit/s of the point's link; NaN for one machine on loopback (it has no link to draw).
  const auto rate_of = [](const PointSamples& point, const SystemSamples&) {
    return point.point.machines > 1 && point.point.inter_machine_bits_per_s
               ? *point.point.inter_machine_bits_per_s / 1e6
               : std::nan("");
  };
  const std::string label = "inter-machine bandwidth (Mbit/s)";
  add_axis_sweep_figures(
      samples, {axis, "bandwidth", label, "inter-machine bandwidth", "one bandwidth", rate_of},
      set);
  add_axis_sweep_figures(
      samples,
      {axis, "bandwidth", label, "inter-machine bandwidth", "one bandwidth", rate_of, true}, set);
  return set;
}

FigureSet bucket_sweep_figures(const ResultSamples& samples) {
  FigureSet set;
  const auto axes = numeric_swept_axes(samples);
  if (std::find(axes.begin(), axes.end(), kBucketAxis) == axes.end()) {
    set.unfit = "the sweep has no axis ddp.bucket_mb with two or more values";
    return set;
  }
  add_axis_sweep_figures(samples,
                         {kBucketAxis, "bucket_sweep", "bucket size cap (MiB)", "DDP bucket size",
                          "fixed bucket size", bucket_of},
                         set);
  if (set.figures.empty()) set.unfit = "no system has samples at two or more bucket sizes";
  return set;
}

FigureSet sweep_figures(const ResultSamples& samples) {
  FigureSet set;
  for (const auto& path : numeric_swept_axes(samples)) {
    // ddp.bucket_mb has its own kind; run.world_size has scaling (with throughput).
    if (path == kBucketAxis) continue;
    const auto value_of = [path](const PointSamples& point, const SystemSamples&) {
      double value = 0;
      numeric_coordinate(point.point, path, value);
      return value;
    };
    add_axis_sweep_figures(samples, {path, "sweep", path, path, "one value", value_of}, set);
  }
  if (set.figures.empty()) {
    set.unfit = "the sweep has no numeric axis (other than ddp.bucket_mb) with two or more values";
  }
  return set;
}

}  // namespace harness
