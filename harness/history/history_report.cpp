#include "harness/history/history_report.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/text_util.h"
#include "harness/history/history_check.h"
#include "harness/history/report_paths.h"
#include "harness/history/trend_chart.h"

namespace harness {

namespace fs = std::filesystem;

namespace {

// Each page marks whether its charts loaded (data-charts="loaded/total" on <body>), which a
// browser test reads back; nothing else runs.
constexpr const char* kPageHead =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    "<style>body{font-family:sans-serif;margin:2em;max-width:1000px}"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}"
    ".regression{color:#cb181d;font-weight:bold}.improvement{color:#238b45}"
    "img{max-width:100%;border:1px solid #eee}</style>\n"
    "<script>window.addEventListener('load',function(){var i=document.images,n=0;"
    "for(var k=0;k<i.length;k++){if(i[k].complete&&i[k].naturalWidth>0)n++;}"
    "document.body.setAttribute('data-charts',n+'/'+i.length);});</script>\n";

struct BenchmarkEntry {
  std::string benchmark;
  size_t environment = 0;
  std::vector<size_t> series;  // into History::series
};

struct AnalysedSeries {
  SeriesAnalysis analysis;
  std::string sha_of_last_change;
};

std::string change_cell(const History& history, const MetricSeries& series,
                        const SeriesChange& change) {
  return std::string("<span class=\"") + (change.worse ? "regression" : "improvement") + "\">" +
         format_signed_percent(change.change_pct) + "</span> at <code>" +
         history.commits[series.commits[change.position].commit].sha.substr(0, 12) + "</code>";
}

// Whether every series of the benchmark has fewer commits before the newest than check needs.
bool too_short_at_newest(const History& history, const BenchmarkEntry& entry) {
  return std::all_of(entry.series.begin(), entry.series.end(), [&](size_t s) {
    return commits_before(history.series[s], history.commits.size() - 1) < kDefaultMinCommitsBefore;
  });
}

// The status of a series at the newest commit: the newest change's side when its level still
// holds there, "steady" when it never changed.
std::string status_of(const History& history, const MetricSeries& series,
                      const SeriesAnalysis& analysis) {
  if (analysis.changes.empty()) return "steady";
  const SeriesChange& last = analysis.changes.back();
  return std::string(last.worse ? "worse" : "better") + " since " +
         history.commits[series.commits[last.position].commit].sha.substr(0, 8);
}

void write_benchmark_page(const fs::path& folder, const History& history,
                          const BenchmarkEntry& entry,
                          const std::map<size_t, SeriesAnalysis>& analyses,
                          const ReportOptions& options) {
  std::ostringstream page;
  page << kPageHead << "<title>" << markup_escaped(entry.benchmark) << "</title></head><body>\n"
       << "<p><a href=\"" << report_index_page() << "\">" << markup_escaped(options.title)
       << "</a></p>\n<h1>" << markup_escaped(entry.benchmark) << "</h1>\n<p>Environment <code>"
       << history.environments[entry.environment].key.substr(0, 8)
       << "</code>: " << markup_escaped(history.environments[entry.environment].description)
       << "</p>\n";
  for (const size_t s : entry.series) {
    const MetricSeries& series = history.series[s];
    const SeriesAnalysis& analysis = analyses.at(s);
    size_t runs = 0;
    for (const CommitRuns& commit : series.commits) runs += commit.runs.size();
    page << "<h2 id=\"" << chart_anchor(series.key.metric) << "\">"
         << markup_escaped(series.key.metric)
         << (series.against_control ? " (over its control)" : "") << "</h2>\n<p>"
         << series.commits.size() << " commits, " << runs << " runs; " << analysis.changes.size()
         << " change point(s)";
    for (const SeriesChange& change : analysis.changes) {
      page << "; " << change_cell(history, series, change) << " (p "
           << format_general(change.point.pvalue) << ")";
    }
    page << "</p>\n<img src=\"" << chart_file(series.key, entry.environment) << "\" alt=\""
         << markup_escaped(series.key.metric) << "\">\n";
  }
  page << "</body></html>\n";
  write_file_atomic(folder / benchmark_page(entry.benchmark, entry.environment), page.str());
}

void write_index(const fs::path& folder, const History& history,
                 const std::vector<BenchmarkEntry>& entries,
                 const std::map<size_t, SeriesAnalysis>& analyses, const ReportOptions& options) {
  std::ostringstream page;
  page << kPageHead << "<title>" << markup_escaped(options.title) << "</title></head><body>\n<h1>"
       << markup_escaped(options.title) << "</h1>\n<p>" << history.commits.size()
       << " commits, from <code>" << history.commits.front().sha.substr(0, 12)
       << "</code> to <code>" << history.commits.back().sha.substr(0, 12)
       << "</code>. Change points by E-divisive means (window " << options.detector.window
       << ", p &lt; " << format_general(options.detector.max_pvalue)
       << ") over each commit's median; values of different environments are never compared.</p>\n"
       << "<table id=\"benchmarks\"><tr><th>benchmark</th><th>environment</th><th>metrics</th>"
          "<th>latest change</th><th>status</th></tr>\n";
  for (const BenchmarkEntry& entry : entries) {
    // The benchmark's latest change over its metrics, and how many metrics are worse now.
    std::string latest = "none", status = "steady";
    size_t latest_commit = 0, worse = 0;
    bool any = false;
    for (const size_t s : entry.series) {
      const MetricSeries& series = history.series[s];
      const SeriesAnalysis& analysis = analyses.at(s);
      if (analysis.changes.empty()) continue;
      const SeriesChange& last = analysis.changes.back();
      worse += last.worse;
      const size_t commit = series.commits[last.position].commit;
      if (!any || commit > latest_commit) {
        latest = markup_escaped(series.key.metric) + " " + change_cell(history, series, last);
        status = status_of(history, series, analysis);
        latest_commit = commit, any = true;
      }
    }
    if (worse > 0) status += " (" + std::to_string(worse) + " metric(s) worse)";
    // As `history check` says at the newest commit: no change point in a series that short is
    // no evidence of a steady level.
    if (!any && too_short_at_newest(history, entry)) {
      status = "too short to say (fewer than " + std::to_string(kDefaultMinCommitsBefore) +
               " commits before the newest)";
    }
    page << "<tr class=\"benchmark\"><td><a href=\""
         << benchmark_page(entry.benchmark, entry.environment) << "\">"
         << markup_escaped(entry.benchmark) << "</a></td><td><code>"
         << history.environments[entry.environment].key.substr(0, 8) << "</code></td><td>"
         << entry.series.size() << "</td><td>" << latest << "</td><td>" << status << "</td></tr>\n";
  }
  page << "</table>\n<h2>Environments</h2>\n<ul>\n";
  for (const EnvironmentFingerprint& environment : history.environments) {
    page << "<li><code>" << environment.key.substr(0, 8)
         << "</code>: " << markup_escaped(environment.description) << "</li>\n";
  }
  page << "</ul>\n</body></html>\n";
  write_file_atomic(folder / report_index_page(), page.str());
}

// `out` may be replaced only when it is empty or a report.
void check_replaceable(const fs::path& out) {
  std::error_code error;
  if (!fs::exists(out, error)) return;
  if (fs::is_directory(out, error) &&
      (fs::is_empty(out, error) || fs::exists(out / kReportMarker, error))) {
    return;
  }
  throw InputError("--out " + out.string() +
                   ": exists and is not a report of harness history (nothing there is replaced)");
}

}  // namespace

size_t write_history_report(const History& history, const ReportOptions& options) {
  if (history.commits.empty()) throw InputError("history report: the history holds no commit");
  check_replaceable(options.out);
  std::vector<BenchmarkEntry> entries;
  std::map<size_t, SeriesAnalysis> analyses;
  for (size_t s = 0; s < history.series.size(); ++s) {
    const MetricSeries& series = history.series[s];
    if (entries.empty() || entries.back().benchmark != series.key.benchmark ||
        entries.back().environment != series.environment) {
      entries.push_back({series.key.benchmark, series.environment, {}});
    }
    entries.back().series.push_back(s);
    analyses[s] = analyse_series(series, options.detector, options.alpha);
  }
  const fs::path out = fs::absolute(options.out).lexically_normal();
  const fs::path staging = out.parent_path() / ("." + out.filename().string() + ".writing");
  fs::remove_all(staging);
  create_output_folder(staging, "--out");
  for (size_t s = 0; s < history.series.size(); ++s) {
    write_file_atomic(staging / chart_file(history.series[s].key, history.series[s].environment),
                      trend_chart_svg(history, history.series[s], analyses.at(s)));
  }
  for (const BenchmarkEntry& entry : entries) {
    write_benchmark_page(staging, history, entry, analyses, options);
  }
  write_index(staging, history, entries, analyses, options);
  write_file_atomic(staging / kReportMarker, "written by harness history report\n");
  fs::remove_all(out);
  fs::rename(staging, out);
  return history.series.size();
}

}  // namespace harness
