#include "harness/history/history_check.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/input_error.h"
#include "common/text_util.h"
#include "harness/history/report_paths.h"

namespace harness {

namespace {

size_t find_commit(const History& history, const std::string& since) {
  if (since.empty()) return history.commits.size() - 1;
  std::vector<size_t> matches;
  for (size_t c = 0; c < history.commits.size(); ++c) {
    const std::string& sha = history.commits[c].sha;
    if (sha == since || (since.size() >= 7 && sha.rfind(since, 0) == 0)) matches.push_back(c);
  }
  if (matches.size() == 1) return matches.front();
  if (matches.empty()) {
    throw InputError("--since " + since + ": the history holds no such commit (" +
                     std::to_string(history.commits.size()) + " commits, the newest " +
                     history.commits.back().sha.substr(0, 12) + ")");
  }
  throw InputError("--since " + since + ": names " + std::to_string(matches.size()) +
                   " commits; give more of the sha");
}

bool is_judged(const MetricKey& key, const CheckOptions& options) {
  if (!options.metrics.empty()) {
    return std::find(options.metrics.begin(), options.metrics.end(), key.metric) !=
           options.metrics.end();
  }
  if (key.unit.empty()) return true;  // an exact counter
  return std::any_of(std::begin(kDefaultCheckedMetrics), std::end(kDefaultCheckedMetrics),
                     [&](const char* name) { return key.metric == name; });
}

CheckRow judge(const MetricSeries& series, size_t since, const CheckOptions& options) {
  CheckRow row;
  row.commits_before = commits_before(series, since);
  if (row.commits_before < options.min_commits_before) {
    row.verdict = SeriesVerdict::too_short;
    return row;
  }
  const SeriesAnalysis analysis = analyse_series(series, options.detector, options.alpha);
  for (const SeriesChange& change : analysis.changes) {
    if (series.commits[change.position].commit < since) continue;
    row.changes.push_back(change);
    const bool beyond = std::fabs(change.change_pct) > options.threshold_pct;
    const bool confirmed = change.runs_after >= options.min_runs_after;
    const SeriesVerdict verdict = !beyond         ? SeriesVerdict::within_threshold
                                  : !change.worse ? SeriesVerdict::improvement
                                  : confirmed     ? SeriesVerdict::regression
                                                  : SeriesVerdict::unconfirmed;
    // A regression outweighs an improvement, which outweighs a change within the threshold.
    if (!row.change || int(verdict) < int(row.verdict)) {
      row.verdict = verdict;
      row.change = change;
    }
  }
  return row;
}

// Which judged series were judged against a control, and how many commits had none.
std::string control_note(const History& history, const CheckResult& result) {
  size_t against = 0, left_out = 0;
  for (const CheckRow& row : result.rows) {
    const MetricSeries& series = history.series[row.series];
    against += series.against_control;
    left_out += series.commits_without_control;
  }
  if (against == 0) return "";
  std::string note = std::to_string(against) + " of " + std::to_string(result.rows.size()) +
                     " series judged against their control (each run over the median of the "
                     "control's runs at its commit, so that the machine's level cancels)";
  if (left_out > 0) {
    note += "; " + std::to_string(left_out) + " commit(s) without a control left out of them";
  }
  return note + ".\n\n";
}

std::string change_text(const SeriesChange& change) {
  return change.low_pct && change.high_pct
             ? format_change_with_interval(change.change_pct, *change.low_pct, *change.high_pct)
             : format_signed_percent(change.change_pct);
}

std::string link_to(const MetricSeries& series, const CheckOptions& options) {
  if (options.link.empty()) return "";
  std::string base = options.link;
  if (base.back() != '/') base += '/';
  return base + benchmark_page(series.key.benchmark, series.environment) + "#" +
         chart_anchor(series.key.metric);
}

nlohmann::json change_json(const History& history, const MetricSeries& series,
                           const SeriesChange& change) {
  const auto optional = [](const std::optional<double>& value) {
    return value ? nlohmann::json(*value) : nlohmann::json();
  };
  return {{"commit", history.commits[series.commits[change.position].commit].sha},
          {"index", change.position},
          {"median_before", change.median_before},
          {"median_after", change.median_after},
          {"change_pct", change.change_pct},
          {"low_pct", optional(change.low_pct)},
          {"high_pct", optional(change.high_pct)},
          {"pvalue", change.point.pvalue},
          {"runs_after", change.runs_after}};
}

}  // namespace

size_t commits_before(const MetricSeries& series, size_t since) {
  return static_cast<size_t>(std::count_if(series.commits.begin(), series.commits.end(),
                                           [&](const CommitRuns& c) { return c.commit < since; }));
}

const char* verdict_name(SeriesVerdict verdict) {
  switch (verdict) {
    case SeriesVerdict::regression:
      return "regression";
    case SeriesVerdict::unconfirmed:
      return "unconfirmed";
    case SeriesVerdict::improvement:
      return "improvement";
    case SeriesVerdict::within_threshold:
      return "change within threshold";
    case SeriesVerdict::no_change:
      return "no change";
    case SeriesVerdict::too_short:
      return "too short to say";
  }
  return "?";
}

namespace {

// Every --metric names a metric the history holds: a typo would judge nothing.
void check_metric_names(const History& history, const CheckOptions& options) {
  std::vector<std::string> known;
  for (const MetricSeries& series : history.series) {
    if (std::find(known.begin(), known.end(), series.key.metric) == known.end()) {
      known.push_back(series.key.metric);
    }
  }
  for (const std::string& metric : options.metrics) {
    if (std::find(known.begin(), known.end(), metric) != known.end()) continue;
    const std::string hint = closest_match(metric, known);
    throw InputError("--metric '" + metric + "': the history holds no such metric" +
                     (hint.empty() ? "" : "; did you mean '" + hint + "'?"));
  }
}

}  // namespace

CheckResult check_history(const History& history, const CheckOptions& options) {
  if (history.commits.empty()) throw InputError("history check: the history holds no commit");
  check_metric_names(history, options);
  CheckResult result;
  result.since = find_commit(history, options.since);
  for (size_t s = 0; s < history.series.size(); ++s) {
    const MetricSeries& series = history.series[s];
    if (!is_judged(series.key, options)) continue;
    // A metric not measured at or after `since` (an environment that did not run it) says
    // nothing of it.
    if (series.commits.empty() || series.commits.back().commit < result.since) continue;
    CheckRow row = judge(series, result.since, options);
    row.series = s;
    result.rows.push_back(std::move(row));
  }
  return result;
}

int check_exit_code(const CheckResult& result) {
  const auto any = [&](SeriesVerdict verdict) {
    return std::any_of(result.rows.begin(), result.rows.end(),
                       [&](const CheckRow& row) { return row.verdict == verdict; });
  };
  if (any(SeriesVerdict::regression)) return 1;
  if (any(SeriesVerdict::too_short) || any(SeriesVerdict::unconfirmed) || result.rows.empty()) {
    return 3;
  }
  return 0;
}

std::string check_markdown(const History& history, const CheckResult& result,
                           const CheckOptions& options) {
  std::ostringstream out;
  size_t counts[6] = {};
  for (const CheckRow& row : result.rows) ++counts[int(row.verdict)];
  const StoredCommit& since = history.commits[result.since];
  const int code = check_exit_code(result);
  out << "### Benchmark history: "
      << (code == 1   ? "regression"
          : code == 3 ? "inconclusive"
                      : "no regression")
      << "\n\n";
  out << "At or after `" << since.sha.substr(0, 12) << "` (commit " << result.since + 1 << " of "
      << history.commits.size() << "): " << result.rows.size() << " series judged, "
      << counts[int(SeriesVerdict::regression)] << " regressed, "
      << counts[int(SeriesVerdict::unconfirmed)] << " worse on fewer than "
      << options.min_runs_after << " runs after the change (unconfirmed), "
      << counts[int(SeriesVerdict::improvement)] << " improved, "
      << counts[int(SeriesVerdict::within_threshold)] << " changed within "
      << format_number(options.threshold_pct) << "%, " << counts[int(SeriesVerdict::too_short)]
      << " too short to say (fewer than " << options.min_commits_before
      << " commits before it). E-divisive means, window " << options.detector.window << ", p < "
      << format_general(options.detector.max_pvalue)
      << "; a change is after/before of the commits' medians on its two sides (Hodges-Lehmann, "
      << format_number((1 - options.alpha) * 100) << "% interval).\n\n";
  bool header = false;
  for (const CheckRow& row : result.rows) {
    if (row.verdict == SeriesVerdict::no_change || row.verdict == SeriesVerdict::too_short) {
      continue;
    }
    if (!header) {
      out << "| verdict | benchmark | metric | environment | changed at | before | after | "
             "change | p |\n|---|---|---|---|---|---:|---:|---:|---:|\n";
      header = true;
    }
    const MetricSeries& series = history.series[row.series];
    const std::string link = link_to(series, options);
    const std::string verdict =
        row.verdict == SeriesVerdict::unconfirmed
            ? "unconfirmed (" + std::to_string(row.change->runs_after) + " runs after)"
            : verdict_name(row.verdict);
    out << "| " << verdict << " | " << series.key.benchmark << " | "
        << (link.empty() ? series.key.metric : "[" + series.key.metric + "](" + link + ")") << " | "
        << history.environments[series.environment].key.substr(0, 8) << " | ";
    const SeriesChange& change = *row.change;
    const std::string unit = series.key.unit.empty() ? "" : " " + series.key.unit;
    out << "`" << history.commits[series.commits[change.position].commit].sha.substr(0, 12)
        << "` | " << format_general(change.median_before) << unit << " | "
        << format_general(change.median_after) << unit << " | " << change_text(change) << " | "
        << format_general(change.point.pvalue) << " |\n";
  }
  if (header) out << "\n";
  if (const size_t short_series = counts[int(SeriesVerdict::too_short)]; short_series > 0) {
    size_t fewest = options.min_commits_before;
    for (const CheckRow& row : result.rows) {
      if (row.verdict == SeriesVerdict::too_short) fewest = std::min(fewest, row.commits_before);
    }
    out << "Too short to say: " << short_series << " series (as few as " << fewest
        << " commits before it); they are judged once they have " << options.min_commits_before
        << ".\n\n";
  }
  out << control_note(history, result);
  if (history.environments.size() > 1) {
    out << "Values of the " << history.environments.size()
        << " environments below are never compared with one another (incomparable: other "
           "machines, libraries or specs); each is judged against its own history.\n";
  }
  for (size_t e = 0; e < history.environments.size(); ++e) {
    out << "Environment `" << history.environments[e].key.substr(0, 8)
        << "`: " << history.environments[e].description << ".\n";
  }
  if (!options.link.empty()) out << "\nTrends: " << options.link << "\n";
  return out.str();
}

std::string check_json(const History& history, const CheckResult& result) {
  nlohmann::json rows = nlohmann::json::array();
  for (const CheckRow& row : result.rows) {
    const MetricSeries& series = history.series[row.series];
    nlohmann::json out = {{"verdict", verdict_name(row.verdict)},
                          {"benchmark", series.key.benchmark},
                          {"metric", series.key.metric},
                          {"environment", history.environments[series.environment].key},
                          {"commits_before", row.commits_before}};
    nlohmann::json changes = nlohmann::json::array();
    for (const SeriesChange& change : row.changes) {
      changes.push_back(change_json(history, series, change));
    }
    out["changes"] = changes;
    if (row.change) out["change"] = change_json(history, series, *row.change);
    rows.push_back(std::move(out));
  }
  return nlohmann::json{{"exit_code", check_exit_code(result)},
                        {"since", history.commits[result.since].sha},
                        {"rows", rows}}
             .dump(2) +
         "\n";
}

}  // namespace harness
