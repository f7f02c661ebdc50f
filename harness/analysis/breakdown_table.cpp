#include "harness/analysis/breakdown_table.h"

#include <cstdio>
#include <stdexcept>
#include <vector>

#include "harness/analysis/trace_breakdown.h"
#include "harness/analysis/trace_merge.h"

namespace harness {
namespace {

// A row's figures: the mean over a run's ranks.
std::string breakdown_row(const std::string& system, const TraceBreakdown& breakdown) {
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
                "| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %zu |\n",
                system.c_str(), span / n, compute / n, all_to_all / n, all_reduce / n,
                all_gather / n, reduce_scatter / n, send / n, recv / n, idle / n,
                breakdown.ranks.size());
  return row;
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
  const auto flush = [&] {
    if (rows.empty()) return;
    out += "### " + experiment + ": " + (label.empty() ? point : label) +
           " - time breakdown\n\n"
           "ms of one traced iteration (first repeat), mean over ranks: compute is forward + "
           "backward + step less the all-to-alls they waited in; communication kinds overlap "
           "compute where the system overlaps them; idle is neither. Per rank: `harness "
           "trace`.\n\n"
           "| system | span | compute | all-to-all | all-reduce | all-gather | reduce-scatter | "
           "send | recv | idle | ranks |\n"
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n" +
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
      if (!trace.ranks.empty()) rows += breakdown_row(run.system, trace_breakdown(trace));
    } catch (const std::exception&) {
      // Left out here; `harness trace` reports it in one line.
    }
  }
  flush();
  return out;
}

}  // namespace harness
