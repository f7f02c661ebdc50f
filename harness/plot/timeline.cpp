// The timeline figure: a Gantt chart of one traced iteration, a row per rank (and stage), with
// the compute lane on top and a thin lane per communication category present below it, idle
// (bubble) gaps shaded across the row. Drawn from the per-rank traces with boxxyerror boxes.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "common/input_error.h"
#include "harness/analysis/trace_breakdown.h"
#include "harness/analysis/trace_merge.h"
#include "harness/plot/figures.h"
#include "harness/plot/style.h"

namespace harness {

namespace fs = std::filesystem;

namespace {

// More figures than this would bury the report; the first run of each point and system is
// drawn, in sweep order, and the rest are named in a note.
constexpr size_t kMaxTimelines = 12;

struct Category {
  const char* name;
  const char* title;
  const char* color;
  const char* label_color;  // micro-batch labels on the bars
};
constexpr Category kCategories[] = {
    {"forward", "forward", "#0072B2", "#FFFFFF"},
    {"backward", "backward", "#E69F00", "#000000"},
    {"backward_weight", "backward (W)", "#F0E442", "#000000"},
    {"step", "optimizer step", "#CC79A7", "#000000"},
    {"send", "send", "#009E73", "#FFFFFF"},
    {"recv", "recv", "#56B4E9", "#000000"},
    {"allreduce", "all-reduce", "#D55E00", "#FFFFFF"},
};
constexpr const char* kIdleColor = "#D9D9D9";
constexpr double kRowHalf = 0.42;  // a rank's row is [y - 0.42, y + 0.42]; the rest is spacing

// Rounded to 1e-9 so that lane arithmetic prints as 0.21, not 0.21000000000000002.
std::string number(double value) {
  value = std::round(value * 1e9) / 1e9;
  if (value == 0) value = 0;  // no "-0"
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

// Where each lane sits inside a rank's row (y grows downwards: rank 0 on top): the compute lane
// takes twice the height of a communication lane.
struct Lanes {
  std::map<std::string, std::pair<double, double>> offsets;  // category -> (top, bottom)
};
Lanes lanes_for(const std::vector<std::string>& comm_present) {
  Lanes lanes;
  const double units = 2.0 + static_cast<double>(comm_present.size());
  const double unit = 2 * kRowHalf / units;
  const double compute_bottom = -kRowHalf + 2 * unit;
  for (const char* c : kTraceComputeCategories) lanes.offsets[c] = {-kRowHalf, compute_bottom};
  double top = compute_bottom;
  for (const auto& c : comm_present) {
    lanes.offsets[c] = {top, top + unit};
    top += unit;
  }
  return lanes;
}

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) out += c == '"' ? '\'' : c;
  return out + "\"";
}

// The communication categories any rank of the trace has events of, in lane order.
std::vector<std::string> communication_present(const LoadedTrace& trace) {
  std::vector<std::string> present;
  for (const char* c : kTraceCommCategories) {
    for (const auto& rank : trace.ranks) {
      if (std::any_of(rank.spans.begin(), rank.spans.end(),
                      [c](const TraceSpan& s) { return s.category == c; })) {
        present.push_back(c);
        break;
      }
    }
  }
  return present;
}

double trace_end_us(const LoadedTrace& trace) {
  double end_us = 0;
  for (const auto& rank : trace.ranks) {
    for (const auto& span : rank.spans) end_us = std::max(end_us, span.end_us);
  }
  return end_us;
}

// Data rows of the idle gaps of every rank (the whole row's height), "" when there are none.
std::string idle_rows(const LoadedTrace& trace) {
  std::ostringstream rows;
  for (size_t i = 0; i < trace.ranks.size(); ++i) {
    for (const auto& [start, end] : idle_intervals(trace.ranks[i])) {
      rows << number(start / 1000.0) << " " << number(end / 1000.0) << " "
           << number(static_cast<double>(i) - kRowHalf) << " "
           << number(static_cast<double>(i) + kRowHalf) << " " << trace.ranks[i].rank
           << " \"idle\"\n";
    }
  }
  return rows.str();
}

// `set ytics (...)` naming each row after its rank (and stage).
std::string rank_ytics(const LoadedTrace& trace) {
  std::string ytics = "set ytics (";
  for (size_t i = 0; i < trace.ranks.size(); ++i) {
    ytics += (i ? ", " : "") + gnuplot_string(rank_label(trace.ranks[i])) + " " + std::to_string(i);
  }
  return ytics + ")";
}

Figure timeline_figure(const LoadedTrace& trace, const std::string& experiment) {
  const size_t rows = trace.ranks.size();
  const std::vector<std::string> comm_present = communication_present(trace);
  const Lanes lanes = lanes_for(comm_present);
  const double end_ms = trace_end_us(trace) / 1000.0;

  std::ostringstream data;
  data << "# " << experiment << ": timeline of one iteration, " << trace_run_name(trace.run)
       << "\n# times in ms since the earliest event of the run (all ranks); row y = position of "
          "the rank (0 on top)\n"
       << "# one block per category (gnuplot index 0, 1, ...), blocks separated by two blank "
          "lines; then label blocks\n"
       << "# boxes: start_ms end_ms y_top y_bottom rank \"event name\"\n";
  std::string plot;
  size_t block = 0;
  const auto add_block = [&](const std::string& title, const std::string& color,
                             const std::string& rows_text) {
    data << (block ? "\n\n" : "") << "# block " << block << ": " << title << "\n" << rows_text;
    plot += std::string(block ? ", \\\n     " : "plot ") + "datafile index " +
            std::to_string(block) +
            " using (($1+$2)/2):(($3+$4)/2):1:2:3:4 with boxxyerror fs solid 1.0 border lc rgb "
            "\"white\" lc "
            "rgb \"" +
            color + "\" title " + gnuplot_string(title);
    ++block;
  };

  // Idle gaps first, so that they sit behind everything else.
  if (const std::string idle = idle_rows(trace); !idle.empty()) {
    add_block("idle (bubble)", kIdleColor, idle);
  }

  // Micro-batch numbers on compute bars wide enough to hold them.
  std::map<std::string, std::string> labels;  // label colour -> rows
  for (const auto& category : kCategories) {
    std::ostringstream boxes;
    const auto [top, bottom] = lanes.offsets.count(category.name) ? lanes.offsets.at(category.name)
                                                                  : std::pair<double, double>{0, 0};
    for (size_t i = 0; i < rows; ++i) {
      for (const auto& span : trace.ranks[i].spans) {
        if (span.category != category.name) continue;
        const double y = static_cast<double>(i);
        boxes << number(span.start_us / 1000.0) << " " << number(span.end_us / 1000.0) << " "
              << number(y + top) << " " << number(y + bottom) << " " << trace.ranks[i].rank << " "
              << quoted(span.name) << "\n";
        const double width_ms = (span.end_us - span.start_us) / 1000.0;
        if (span.micro_batch >= 0 && is_compute_category(span.category) &&
            width_ms > 0.025 * end_ms) {
          labels[category.label_color] +=
              number((span.start_us + span.end_us) / 2000.0) + " " +
              number(y + (top + bottom) / 2) + " \"" +
              std::string(1, static_cast<char>(std::toupper(category.name[0]))) +
              std::to_string(span.micro_batch) + "\"\n";
        }
      }
    }
    if (!boxes.str().empty()) add_block(category.title, category.color, boxes.str());
  }
  for (const auto& [color, label_rows] : labels) {
    data << "\n\n# block " << block << ": micro-batch labels (F = forward, B = backward)\n"
         << label_rows;
    plot += ", \\\n     datafile index " + std::to_string(block) +
            " using 1:2:3 with labels center font \",9\" tc rgb \"" + color + "\" notitle";
    ++block;
  }

  const std::string ytics = rank_ytics(trace);
  std::string lanes_text = "lanes per rank: compute";
  for (const auto& c : comm_present)
    lanes_text += ", " + std::string(c == "allreduce" ? "all-reduce" : c);

  std::string iteration;
  if (!trace.ranks.empty() && trace.ranks.front().iteration >= 0) {
    iteration = ", iteration " + std::to_string(trace.ranks.front().iteration);
  }
  // Sweeps over whole maps make long labels: keep the title inside a 1200-pixel figure.
  std::string label = trace.run.label;
  if (label.size() > 100) label = label.substr(0, 97) + "...";
  const std::string point = label.empty() ? trace.run.point : trace.run.point + " (" + label + ")";
  Figure figure;
  figure.kind = "timeline";
  figure.stem = "timeline_" + trace.run.point + "_" + trace.run.system + "_rep" +
                std::to_string(trace.run.repeat);
  figure.title = experiment + ": timeline of one iteration (" + point + ", " + trace.run.system +
                 ", rep " + std::to_string(trace.run.repeat) + ")";
  figure.width = 1200;
  figure.height = static_cast<int>(std::clamp<size_t>(230 + 85 * rows, 420, 1500));
  figure.fields = {{"title", gnuplot_string(experiment + ": timeline of one iteration\npoint " +
                                            point + "\nsystem " + trace.run.system + ", repeat " +
                                            std::to_string(trace.run.repeat) + iteration + " (" +
                                            lanes_text + ")")},
                   {"xrange", "[0:" + number(end_ms * 1.01) + "]"},
                   {"yrange", "[" + number(static_cast<double>(rows) - 0.5) + ":-0.5]"},
                   {"ytics", ytics},
                   {"plot", plot}};
  figure.data = data.str();
  return figure;
}

}  // namespace

FigureSet timeline_figures(const fs::path& directory, const std::string& experiment) {
  FigureSet set;
  std::vector<TraceRun> runs = find_trace_runs(directory);
  if (runs.empty()) {
    set.unfit = "no traces in this results folder";
    return set;
  }
  // One run per point and system: its first repeat with traces.
  std::vector<TraceRun> chosen;
  for (const auto& run : runs) {
    if (chosen.empty() || chosen.back().point != run.point || chosen.back().system != run.system) {
      chosen.push_back(run);
    }
  }
  std::vector<std::string> skipped;
  for (const auto& run : chosen) {
    if (set.figures.size() == kMaxTimelines) {
      skipped.push_back(run.point + "/" + run.system);
      continue;
    }
    try {
      set.figures.push_back(timeline_figure(load_trace_run(run), experiment));
    } catch (const InputError& e) {
      set.notes.push_back("skipped " + trace_run_name(run) + ": " + e.what());
    }
  }
  if (!skipped.empty()) {
    set.notes.push_back("drew the first " + std::to_string(kMaxTimelines) + " runs; " +
                        std::to_string(skipped.size()) +
                        " more have traces (harness trace --point/--system merges any of them)");
  }
  if (set.figures.empty()) {
    set.unfit = "no readable traces: " + set.notes.front();  // one line, as for other kinds
    set.notes.clear();
  }
  return set;
}

}  // namespace harness
