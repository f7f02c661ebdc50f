// `harness history report --out DIR`: the history as a static site that opens from file:// (no
// server, no network, no script from elsewhere): index.html lists every benchmark per
// environment with its latest change and its status at the newest commit; a page per benchmark
// holds a trend chart per metric (trend_chart.h) and its changes; every chart is also its own
// SVG file under charts/. The folder is written beside DIR and renamed into place: a reader never
// sees half a report, and a report written before is replaced whole.
#pragma once

#include <filesystem>

#include "harness/history/history_records.h"
#include "harness/history/series_analysis.h"

namespace harness {

struct ReportOptions {
  std::filesystem::path out;
  ChangePointOptions detector;
  double alpha = 0.05;
  std::string title = "Benchmark history";
};

// Throws InputError when `out` exists and is neither empty nor a report written before.
// Returns the number of charts written.
size_t write_history_report(const History& history, const ReportOptions& options);

// The file that marks a folder as a report (so that a later report may replace it).
inline constexpr const char* kReportMarker = ".harness-history-report";

}  // namespace harness
