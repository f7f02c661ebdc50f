// What one `harness history add` records, and what a history holds when it is read back: one
// value per run for every benchmark (experiment / point / system) and metric, with the commit it
// measured and the environment it ran in. Plain data; history_store keeps it, results_records
// takes it from a results folder.
#pragma once

#include <string>
#include <vector>

namespace harness {

// Which way is worse: a latency or a byte count that grows, a throughput that falls.
enum class Better { lower, higher };
const char* to_string(Better better);
Better better_from_string(const std::string& text);  // throws InputError

struct CommitInfo {
  std::string sha;
  std::string branch;
  std::string committed_utc;  // ISO 8601, as `git show -s --format=%cI` gives it, or ""
};

// What the values depend on besides the code: two values with different fingerprints are never
// compared. `key` is a hash of `description`'s fields.
struct EnvironmentFingerprint {
  std::string key;          // 16 hex digits
  std::string description;  // "machine vm, AMD EPYC x 2, LibTorch 1.13.0, BLAS openblas, ..."
};

struct MetricKey {
  std::string benchmark;  // "ci_regression / default / overlap"
  std::string metric;     // "iteration p50"
  std::string unit;       // "ms", "%", "tokens/s", "MiB", "bytes", ""
  Better better = Better::lower;
  friend auto operator<=>(const MetricKey& a, const MetricKey& b) {
    if (auto c = a.benchmark <=> b.benchmark; c != 0) return c;
    return a.metric <=> b.metric;
  }
  friend bool operator==(const MetricKey& a, const MetricKey& b) {
    return a.benchmark == b.benchmark && a.metric == b.metric;
  }
};

struct RunValue {
  MetricKey key;
  int run = 0;  // the run (a launch of the ranks) within the addition; exact counters: 0
  double value = 0;
};

struct HistoryAddition {
  CommitInfo commit;
  EnvironmentFingerprint environment;
  std::string results;  // the folder it came from, as given
  std::vector<RunValue> values;
  // A control measured in the same job (harness history add --control): the same metrics of a
  // reference build's runs; empty: none.
  std::vector<RunValue> control_values;
};

// A history read back: commits in the order they were added, and per environment and metric the
// run values of each commit that has any.
struct StoredCommit {
  std::string sha, branch, committed_utc, added_utc;
};

struct CommitRuns {
  size_t commit = 0;  // index into History::commits
  std::vector<double> runs;
};

struct MetricSeries {
  size_t environment = 0;  // index into History::environments
  MetricKey key;
  std::vector<CommitRuns> commits;  // in commit order
  // Judged against a control (harness/history/control_ratio.h): each run is its value over the
  // median of the control's runs at its commit, so that the machine's level cancels. Commits
  // without a control are left out of such a series, and counted.
  bool against_control = false;
  size_t commits_without_control = 0;
};

struct History {
  std::vector<StoredCommit> commits;
  std::vector<EnvironmentFingerprint> environments;
  std::vector<MetricSeries> series;  // by environment, then benchmark and metric
};

}  // namespace harness
