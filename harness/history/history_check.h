// `harness history check`: has a metric changed for the worse at or after a commit? Every judged
// metric's history (per environment: values of different fingerprints are never compared) is
// analysed (series_analysis.h); a change point at or after `since` that moves the metric the
// worse way by more than the threshold is a regression, once at least min_runs_after runs follow
// it. Exit 1 then; else 3 when a judged series holds too few commits before `since` to say, or a
// worse change too few runs after it; else 0.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/history/series_analysis.h"

namespace harness {

// Judged unless --metric says otherwise: the iteration's p50, MFU, tokens/s and every exact
// counter; the other percentiles and phases are in the report, not in the verdict.
inline constexpr const char* kDefaultCheckedMetrics[] = {"iteration p50", "MFU", "tokens/s"};
// Fewer commits than this before `since`: too short a history to find a change at it.
inline constexpr size_t kDefaultMinCommitsBefore = 4;

// The series' commits before `since` (an index into History::commits): what check (and the
// report's index, at the newest commit) compares with kDefaultMinCommitsBefore.
size_t commits_before(const MetricSeries& series, size_t since);
// A worse change resting on fewer runs than this after it is not called a regression: one slow
// run at the newest commit cannot be told from a slow build (inconclusive instead).
inline constexpr size_t kDefaultMinRunsAfter = 3;

struct CheckOptions {
  std::string since;  // a commit's sha (or a prefix of 7 or more); "": the newest commit
  double threshold_pct = 5;
  double alpha = 0.05;  // the change's interval
  ChangePointOptions detector;
  std::vector<std::string> metrics;  // empty: the defaults above and the counters
  size_t min_commits_before = kDefaultMinCommitsBefore;
  size_t min_runs_after = kDefaultMinRunsAfter;
  std::string link;  // the published report's URL (or folder): each row links to its chart
};

// In the order they outweigh one another for a series with several changes.
enum class SeriesVerdict {
  regression,
  unconfirmed,  // worse beyond the threshold, on fewer than min_runs_after runs after the change
  improvement,
  within_threshold,
  no_change,
  too_short,
};
const char* verdict_name(SeriesVerdict verdict);

struct CheckRow {
  size_t series = 0;  // index into History::series
  SeriesVerdict verdict = SeriesVerdict::no_change;
  size_t commits_before = 0;           // of this series, before `since`
  std::optional<SeriesChange> change;  // the change at or after `since` that decided
  std::vector<SeriesChange> changes;   // every change at or after `since`, in order
};

struct CheckResult {
  size_t since = 0;            // index into History::commits
  std::vector<CheckRow> rows;  // judged series, in History::series order
};

// Throws InputError for an empty history, or a `since` it does not hold (or that is ambiguous).
CheckResult check_history(const History& history, const CheckOptions& options);

int check_exit_code(const CheckResult& result);

// A pull-request comment: the verdict, then a row per changed or too-short series (the metric,
// the commit where it changed, medians before and after, the change with its interval, a link).
std::string check_markdown(const History& history, const CheckResult& result,
                           const CheckOptions& options);

// The same as JSON for tools: {"exit_code", "since", "rows": [{"verdict", "benchmark",
// "metric", "environment", "commits_before", "changes": [each change at or after `since`: "commit",
// "index" (its position in the series), "median_before", "median_after", "change_pct",
// "low_pct", "high_pct", "pvalue"], and "change": the one that decided, as those}]}.
std::string check_json(const History& history, const CheckResult& result);

}  // namespace harness
