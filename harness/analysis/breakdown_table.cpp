#include "harness/analysis/breakdown_table.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <vector>

#include "common/statistics.h"
#include "harness/analysis/trace_breakdown.h"
#include "harness/analysis/trace_merge.h"
#include "harness/results/run_summary.h"

namespace harness {
namespace {

// Where the traced iteration sits in its run, like with like: each measured iteration's time on
// its slowest rank, the traced one's beside their median, and the share at or below it.
struct TracedPlace {
  double traced_ms = 0, median_ms = 0, share = 0;
  // Beyond p90 or below p10: its breakdown may not be the run's.
  bool atypical() const { return share > 0.9 || share < 0.1; }
};

// Each measured iteration's time on its slowest rank; empty where a rank's samples cannot be
// read or the ranks measured different counts.
std::vector<double> slowest_rank_iterations(const LoadedTrace& trace) {
  std::vector<double> slowest;
  try {
    for (const RankTrace& rank : trace.ranks) {
      const auto samples =
          read_sample_file(trace.run.directory / ("rank" + std::to_string(rank.rank) + ".csv"))
              .at("iteration");
      if (slowest.empty()) slowest.assign(samples.size(), 0.0);
      if (samples.size() != slowest.size()) return {};
      for (size_t i = 0; i < samples.size(); ++i) slowest[i] = std::max(slowest[i], samples[i]);
    }
  } catch (const std::exception&) {
    return {};  // the breakdown stands; where it sits in the run is not known
  }
  return slowest;
}

std::optional<TracedPlace> traced_place(const LoadedTrace& trace) {
  const long long index = trace.ranks.empty() ? -1 : trace.ranks.front().iteration;
  if (index < 0) return std::nullopt;
  const std::vector<double> slowest = slowest_rank_iterations(trace);
  if (static_cast<size_t>(index) >= slowest.size()) return std::nullopt;
  TracedPlace place;
  place.traced_ms = slowest[index];
  place.median_ms = percentile(slowest, 50);
  place.share = static_cast<double>(std::count_if(slowest.begin(), slowest.end(),
                                                  [&](double v) { return v <= place.traced_ms; })) /
                static_cast<double>(slowest.size());
  return place;
}

// "| 32.300 | 2.000 | 100‡ |": the traced iteration, the run's median, the percent of the run's
// iterations at or below the traced one; dashes where the run's samples cannot say.
std::string place_cells(const std::optional<TracedPlace>& place) {
  if (!place) return " — | — | — |";
  char cells[96];
  std::snprintf(cells, sizeof cells, " %.3f | %.3f | %.0f%s |", place->traced_ms, place->median_ms,
                place->share * 100, place->atypical() ? kAtypicalMark : "");
  return cells;
}

// A row's figures: the mean over a run's ranks.
std::string breakdown_row(const std::string& system, const TraceBreakdown& breakdown,
                          const std::optional<TracedPlace>& place) {
  double span = 0, compute = 0, all_to_all = 0, all_reduce = 0, all_gather = 0, reduce_scatter = 0,
         send = 0, recv = 0, idle = 0;
  for (const auto& rank : breakdown.ranks) {
    span += rank.span_ms;
    compute += rank.compute_ms;
    all_to_all += rank.alltoall_ms;
    all_reduce += rank.allreduce_ms;
    all_gather += rank.allgather_ms;
    reduce_scatter += rank.reducescatter_ms;
    send += rank.send_ms;
    recv += rank.recv_ms;
    idle += rank.idle_ms;
  }
  const double n = static_cast<double>(breakdown.ranks.size());
  char row[512];
  std::snprintf(row, sizeof row,
                "| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %zu |",
                system.c_str(), span / n, compute / n, all_to_all / n, all_reduce / n,
                all_gather / n, reduce_scatter / n, send / n, recv / n, idle / n,
                breakdown.ranks.size());
  return row + place_cells(place) + "\n";
}

}  // namespace

std::string render_breakdown_markdown(const std::filesystem::path& run_directory,
                                      const std::string& experiment) {
  std::vector<TraceRun> runs;
  try {
    runs = find_trace_runs(run_directory);
  } catch (const std::exception&) {
    return "";
  }
  std::string out, point, label, rows;
  bool any_atypical = false;
  const auto flush = [&] {
    if (rows.empty()) return;
    out +=
        "### " + experiment + ": " + (label.empty() ? point : label) +
        " - time breakdown\n\n"
        "ms of one traced iteration (first repeat, the middle measured one), mean over ranks: "
        "compute is forward + backward + step less the all-to-alls they waited in; "
        "communication kinds overlap compute where the system overlaps them; idle is neither. "
        "traced is that iteration on its slowest rank, beside the median of the run's iterations "
        "on their slowest rank and the percent of them at or below it. Per rank: `harness "
        "trace`.\n\n"
        "| system | span | compute | all-to-all | all-reduce | all-gather | reduce-scatter | "
        "send | recv | idle | ranks | traced | median | at % |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n" +
        rows + "\n";
    rows.clear();
  };
  for (const auto& run : runs) {
    if (run.repeat != 0) continue;
    if (run.point != point) {
      flush();
      point = run.point;
      label = run.label;
    }
    try {
      const LoadedTrace trace = load_trace_run(run);
      if (trace.ranks.empty()) continue;
      const std::optional<TracedPlace> place = traced_place(trace);
      any_atypical = any_atypical || (place && place->atypical());
      rows += breakdown_row(run.system, trace_breakdown(trace), place);
    } catch (const std::exception&) {
      // Left out here; `harness trace` reports it in one line.
    }
  }
  flush();
  if (any_atypical) out += std::string(kAtypicalLegend) + "\n\n";
  return out;
}

}  // namespace harness
