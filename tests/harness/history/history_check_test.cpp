#include "harness/history/history_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "common/input_error.h"
#include "harness/history/control_ratio.h"

namespace harness {
namespace {

using ::testing::HasSubstr;

// A history of `values.size()` commits c00, c01, ... with one metric in one environment, one run
// per commit.
History one_series(const std::vector<double>& values, Better better = Better::lower) {
  History history;
  history.environments.push_back({"0123456789abcdef", "machine test"});
  MetricSeries series{0, {"exp / p / sys", "iteration p50", "ms", better}, {}};
  for (size_t c = 0; c < values.size(); ++c) {
    char sha[24];
    std::snprintf(sha, sizeof sha, "c%02zu", c);
    history.commits.push_back({sha, "main", "", ""});
    series.commits.push_back({c, {values[c]}});
  }
  history.series.push_back(series);
  return history;
}

// 30 commits alternating 100 +- 1 (no change), then `after` commits at 100 * (1 + step).
std::vector<double> stepped(double step, size_t after = 10) {
  std::vector<double> values;
  for (size_t c = 0; c < 30 + after; ++c) {
    const double noise = (c % 3 == 0 ? 1.0 : c % 3 == 1 ? -1.0 : 0.0) * (1 + 0.1 * double(c % 7));
    values.push_back((100 + noise) * (c >= 30 ? 1 + step : 1));
  }
  return values;
}

TEST(HistoryCheck, AStepBeyondTheThresholdIsARegressionAtItsCommit) {
  const History history = one_series(stepped(0.12));
  CheckOptions options;
  options.since = "c25";
  const CheckResult result = check_history(history, options);
  ASSERT_EQ(result.rows.size(), 1u);
  EXPECT_EQ(result.rows[0].verdict, SeriesVerdict::regression);
  ASSERT_TRUE(result.rows[0].change);
  EXPECT_EQ(result.rows[0].change->position, 30u);
  EXPECT_NEAR(result.rows[0].change->change_pct, 12, 1.5);
  ASSERT_TRUE(result.rows[0].change->low_pct && result.rows[0].change->high_pct);
  EXPECT_LT(*result.rows[0].change->low_pct, result.rows[0].change->change_pct);
  EXPECT_GT(*result.rows[0].change->high_pct, result.rows[0].change->change_pct);
  EXPECT_EQ(check_exit_code(result), 1);
  const std::string markdown = check_markdown(history, result, options);
  EXPECT_THAT(markdown, HasSubstr("### Benchmark history: regression"));
  EXPECT_THAT(markdown,
              HasSubstr("| regression | exp / p / sys | iteration p50 | 01234567 | `c30` |"));
}

TEST(HistoryCheck, ChangesBeforeSinceAndWithinTheThresholdPass) {
  const History history = one_series(stepped(0.12));
  CheckOptions options;
  options.since = "c35";  // after the step
  EXPECT_EQ(check_exit_code(check_history(history, options)), 0);
  options.since = "c25";
  options.threshold_pct = 15;  // a 12% step is within it
  const CheckResult result = check_history(history, options);
  EXPECT_EQ(result.rows[0].verdict, SeriesVerdict::within_threshold);
  EXPECT_EQ(check_exit_code(result), 0);
}

TEST(HistoryCheck, AFasterStepIsAnImprovementAndAThroughputDropARegression) {
  CheckOptions options;
  options.since = "c25";
  EXPECT_EQ(check_history(one_series(stepped(-0.12)), options).rows[0].verdict,
            SeriesVerdict::improvement);
  History throughput = one_series(stepped(-0.12), Better::higher);
  throughput.series[0].key.metric = "tokens/s";
  EXPECT_EQ(check_history(throughput, options).rows[0].verdict, SeriesVerdict::regression);
}

TEST(HistoryCheck, AWorseNewestCommitOnOneRunIsUnconfirmed) {
  // 30 steady commits, then one 12% slower: one run cannot tell a slow build from a slow run.
  std::vector<double> values = stepped(0.12, 1);
  History history = one_series(values);
  const CheckResult one_run = check_history(history, {});
  ASSERT_EQ(one_run.rows.size(), 1u);
  EXPECT_EQ(one_run.rows[0].verdict, SeriesVerdict::unconfirmed);
  ASSERT_TRUE(one_run.rows[0].change);
  EXPECT_EQ(one_run.rows[0].change->position, 30u);
  EXPECT_EQ(one_run.rows[0].change->runs_after, 1u);
  EXPECT_EQ(check_exit_code(one_run), 3);
  EXPECT_THAT(check_markdown(history, one_run, {}), HasSubstr("| unconfirmed (1 runs after) |"));
  // The same commit with three runs, all slower: a regression.
  history.series[0].commits.back().runs = {values.back(), values.back() * 1.001,
                                           values.back() * 0.999};
  EXPECT_EQ(check_history(history, {}).rows[0].verdict, SeriesVerdict::regression);
  // And one run is enough where the user says so.
  CheckOptions one;
  one.min_runs_after = 1;
  EXPECT_EQ(check_history(one_series(values), one).rows[0].verdict, SeriesVerdict::regression);
}

TEST(HistoryCheck, TooShortAHistoryIsInconclusive) {
  const History history = one_series({100, 101, 130});
  const CheckResult result = check_history(history, {});  // since: the newest
  ASSERT_EQ(result.rows.size(), 1u);
  EXPECT_EQ(result.rows[0].verdict, SeriesVerdict::too_short);
  EXPECT_EQ(result.rows[0].commits_before, 2u);
  EXPECT_EQ(check_exit_code(result), 3);
}

TEST(HistoryCheck, OnlyJudgedMetricsCount) {
  History history = one_series(stepped(0.12));
  history.series[0].key.metric = "iteration p99";  // in the report, not the verdict
  CheckOptions options;
  options.since = "c25";
  EXPECT_TRUE(check_history(history, options).rows.empty());
  options.metrics = {"iteration p99"};
  EXPECT_EQ(check_exit_code(check_history(history, options)), 1);
}

TEST(HistoryCheck, EnvironmentsAreNeverCompared) {
  // The same metric slower on another machine from c30 on: two series, neither changes.
  History history = one_series(stepped(0));
  history.environments.push_back({"fedcba9876543210", "machine other"});
  MetricSeries other = history.series[0];
  other.environment = 1;
  other.commits.clear();
  for (size_t c = 30; c < 40; ++c) other.commits.push_back({c, {150}});
  for (size_t c = 30; c < 40; ++c) history.series[0].commits.pop_back();
  history.series.push_back(other);
  CheckOptions options;
  options.since = "c30";
  const CheckResult result = check_history(history, options);
  ASSERT_EQ(result.rows.size(), 1u);  // the first machine measured nothing at or after c30
  EXPECT_EQ(result.rows[0].series, 1u);
  EXPECT_EQ(result.rows[0].verdict, SeriesVerdict::too_short);
}

TEST(ControlRatio, EachRunOverTheMedianOfItsCommitsControl) {
  const MetricSeries tested{0,
                            {"exp / p / sys", "iteration p50", "ms", Better::lower},
                            {{0, {10, 11}}, {1, {12}}, {2, {9}}}};
  // Commit 0's control has median 5; commit 1 none; commit 2 a control of 0 (no ratio).
  const MetricSeries ratio = against_control(tested, {{0, {4, 5, 6}}, {2, {0}}});
  EXPECT_TRUE(ratio.against_control);
  EXPECT_EQ(ratio.key.unit, "x control");
  EXPECT_EQ(ratio.commits_without_control, 2u);
  ASSERT_EQ(ratio.commits.size(), 1u);
  EXPECT_EQ(ratio.commits[0].commit, 0u);
  EXPECT_EQ(ratio.commits[0].runs, (std::vector<double>{2.0, 2.2}));
  // No control anywhere: the series as it was.
  const MetricSeries same = against_control(tested, {});
  EXPECT_FALSE(same.against_control);
  EXPECT_EQ(same.commits.size(), 3u);
}

// The machine's level moves by 15% from commit 30 on, for the tested build and its control
// alike (a slower phase of a shared VM): judged alone, a regression that is no code's; judged
// against the control, nothing. A step of the tested build alone is found either way.
TEST(HistoryCheck, AControlCancelsTheMachinesLevelAndKeepsTheCodesStep) {
  const std::vector<double> level = stepped(0.15);
  History history = one_series(level);
  std::map<size_t, std::vector<double>> control;
  for (size_t c = 0; c < level.size(); ++c) control[c] = {level[c] * 0.5};
  CheckOptions options;
  options.since = "c25";
  EXPECT_EQ(check_history(history, options).rows[0].verdict, SeriesVerdict::regression);
  history.series[0] = against_control(history.series[0], control);
  const CheckResult cancelled = check_history(history, options);
  EXPECT_EQ(cancelled.rows[0].verdict, SeriesVerdict::no_change);
  EXPECT_THAT(check_markdown(history, cancelled, options),
              HasSubstr("1 of 1 series judged against their control"));
  // The tested build 12% slower from commit 32, its control not.
  History stepped_code = one_series(level);
  for (size_t c = 32; c < level.size(); ++c) stepped_code.series[0].commits[c].runs[0] *= 1.12;
  stepped_code.series[0] = against_control(stepped_code.series[0], control);
  const CheckResult found = check_history(stepped_code, options);
  EXPECT_EQ(found.rows[0].verdict, SeriesVerdict::regression);
  ASSERT_TRUE(found.rows[0].change);
  EXPECT_EQ(found.rows[0].change->position, 32u);
  EXPECT_NEAR(found.rows[0].change->change_pct, 12, 1.5);
}

TEST(HistoryCheck, AnUnknownSinceIsRefused) {
  const History history = one_series(stepped(0));
  CheckOptions options;
  options.since = "deadbeef";
  try {
    check_history(history, options);
    FAIL() << "an unknown --since";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--since deadbeef: the history holds no such commit (40 "
                                    "commits, the newest c39)"));
  }
}

}  // namespace
}  // namespace harness
