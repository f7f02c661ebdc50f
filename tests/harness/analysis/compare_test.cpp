// harness compare: matching, verdicts and the exit code on fixture results folders with
// seeded samples, and Google Benchmark JSON.
#include <gtest/gtest.h>

#include <sstream>

#include "common/input_error.h"
#include "harness/analysis/compare_gbench.h"
#include "harness/analysis/compare_samples.h"
#include "harness/cli/compare_command.h"
#include "tests/harness/results/report_fixture.h"
#include "tests/test_util.h"

namespace {

using harness::CompareRequest;
using harness::InputError;
using harness_test::FixtureRun;
using harness_test::noisy_samples;
using harness_test::TempDir;
using nlohmann::json;

// One point, one system, one rank, 30 iterations per side.
FixtureRun thirty_samples(double mean, unsigned seed) {
  FixtureRun run;
  run.systems = {"overlap"};
  run.world_size = 1;
  run.iterations = 30;
  run.sample = noisy_samples(mean, 0.03, seed);
  return run;
}

struct Outcome {
  int code;
  json report;
};

Outcome compare(const std::string& base, const std::string& candidate,
                CompareRequest request = {}) {
  request.base = base;
  request.candidate = candidate;
  request.format = "json";
  std::ostringstream out;
  const int code = harness::run_compare(request, out);
  return {code, json::parse(out.str())};
}

const json& row_of(const json& report, const std::string& phase) {
  for (const auto& row : report["rows"]) {
    if (row["phase"] == phase) return row;
  }
  throw std::runtime_error("no row for " + phase);
}

TEST(Compare, TwentyPercentRegressionExitsOne) {
  TempDir dir;
  const auto base = harness_test::write_fixture_run(dir.path() / "base", thirty_samples(100, 1));
  const auto slow = harness_test::write_fixture_run(dir.path() / "new", thirty_samples(120, 2));
  const Outcome outcome = compare(base, slow);
  EXPECT_EQ(outcome.code, 1);
  EXPECT_TRUE(outcome.report["regression"].get<bool>());
  const json& row = row_of(outcome.report, "iteration");
  EXPECT_EQ(row["verdict"], "regression");
  EXPECT_EQ(row["n_base"], 30);
  EXPECT_NEAR(row["change_pct"].get<double>(), 20, 4);
  EXPECT_LT(row["p_value"].get<double>(), 1e-6);
  EXPECT_TRUE(row["warnings"].empty());
  // Reversed, the same change is an improvement and the gate passes.
  const Outcome reversed = compare(slow, base);
  EXPECT_EQ(reversed.code, 0);
  EXPECT_EQ(row_of(reversed.report, "iteration")["verdict"], "improvement");
}

TEST(Compare, SameDistributionExitsZero) {
  TempDir dir;
  const auto a = harness_test::write_fixture_run(dir.path() / "a", thirty_samples(100, 11));
  const auto b = harness_test::write_fixture_run(dir.path() / "b", thirty_samples(100, 12));
  const Outcome outcome = compare(a, b);
  EXPECT_EQ(outcome.code, 0);
  for (const auto& row : outcome.report["rows"]) {
    EXPECT_EQ(row["verdict"], "no significant change") << row.dump();
    EXPECT_LT(std::abs(row["change_pct"].get<double>()), 5) << row.dump();
  }
  // The same folder against itself: identical samples, p = 1.
  EXPECT_DOUBLE_EQ(row_of(compare(a, a).report, "iteration")["p_value"].get<double>(), 1);
}

TEST(Compare, SignificantChangeWithinThresholdIsNoRegression) {
  TempDir dir;
  // 3% slower with 1% noise: clearly significant, but under a 5% threshold.
  FixtureRun base = thirty_samples(100, 3), slower = thirty_samples(103, 4);
  base.sample = noisy_samples(100, 0.01, 3);
  slower.sample = noisy_samples(103, 0.01, 4);
  const auto a = harness_test::write_fixture_run(dir.path() / "a", base);
  const auto b = harness_test::write_fixture_run(dir.path() / "b", slower);
  const Outcome loose = compare(a, b);
  EXPECT_EQ(loose.code, 0);
  EXPECT_LT(row_of(loose.report, "iteration")["p_value"].get<double>(), 0.05);
  CompareRequest strict;
  strict.threshold = "2%";
  EXPECT_EQ(compare(a, b, strict).code, 1);
  strict.metric = "mean";
  EXPECT_EQ(compare(a, b, strict).code, 1);
}

TEST(Compare, FewSamplesAreFlaggedAndUnmatchedRowsListed) {
  TempDir dir;
  FixtureRun small;
  small.iterations = 3;
  small.world_size = 1;
  small.systems = {"overlap", "sync"};
  const auto a = harness_test::write_fixture_run(dir.path() / "a", small);
  small.systems = {"overlap", "async"};
  const auto b = harness_test::write_fixture_run(dir.path() / "b", small);
  const Outcome outcome = compare(a, b);
  const json& row = row_of(outcome.report, "iteration");
  ASSERT_EQ(row["warnings"].size(), 1u);
  EXPECT_NE(row["warnings"][0].get<std::string>().find("fewer than 9 samples"), std::string::npos);
  EXPECT_EQ(outcome.report["only_in_base"].size(), 4u);  // sync's four phases
  EXPECT_EQ(outcome.report["only_in_new"][0], "default / async / forward");
  // Markdown carries the same warnings.
  CompareRequest request;
  request.base = a;
  request.candidate = b;
  std::ostringstream markdown;
  harness::run_compare(request, markdown);
  EXPECT_NE(markdown.str().find("| default | overlap | iteration | 3 | 3 |"), std::string::npos)
      << markdown.str();
  EXPECT_NE(markdown.str().find("- only in base: default / sync / step"), std::string::npos);
}

TEST(Compare, InputErrors) {
  TempDir dir;
  FixtureRun run;
  run.systems = {"overlap"};
  const auto a = harness_test::write_fixture_run(dir.path() / "a", run);
  run.systems = {"sync"};
  const auto b = harness_test::write_fixture_run(dir.path() / "b", run);
  EXPECT_THROW(compare(a, b), InputError);  // nothing in common
  EXPECT_THROW(compare(a, dir.path() / "missing"), InputError);
  CompareRequest bad;
  bad.threshold = "five";
  EXPECT_THROW(compare(a, a, bad), InputError);
  EXPECT_DOUBLE_EQ(harness::parse_threshold_percent("5%"), 5);
  EXPECT_DOUBLE_EQ(harness::parse_threshold_percent("2.5"), 2.5);
}

std::string gbench_json(const std::vector<double>& times, const std::string& unit) {
  json benchmarks = json::array();
  for (size_t i = 0; i < times.size(); ++i) {
    benchmarks.push_back({{"name", "BM_Summarize/1024"},
                          {"run_name", "BM_Summarize/1024"},
                          {"run_type", "iteration"},
                          {"repetitions", times.size()},
                          {"repetition_index", i},
                          {"real_time", times[i]},
                          {"cpu_time", times[i]},
                          {"time_unit", unit}});
  }
  // Aggregates must not count as samples.
  benchmarks.push_back({{"name", "BM_Summarize/1024_mean"},
                        {"run_name", "BM_Summarize/1024"},
                        {"run_type", "aggregate"},
                        {"aggregate_name", "mean"},
                        {"real_time", 1e9},
                        {"time_unit", unit}});
  return json{{"context", {{"library_build_type", "release"}}}, {"benchmarks", benchmarks}}.dump();
}

TEST(Compare, GoogleBenchmarkRepetitionsAreSamples) {
  TempDir dir;
  std::vector<double> base, slow;
  for (int i = 0; i < 12; ++i) {
    base.push_back(1000 + 7 * (i % 5));      // ns
    slow.push_back(1.25 + 0.007 * (i % 5));  // us: 25% slower
  }
  const auto base_path = dir.write("base.json", gbench_json(base, "ns"));
  const auto slow_path = dir.write("new.json", gbench_json(slow, "us"));
  const auto sets = harness::read_gbench_samples(base_path);
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_EQ(sets[0].samples.size(), 12u);
  CompareRequest request;
  request.gbench = true;
  const Outcome outcome = compare(base_path, slow_path, request);
  EXPECT_EQ(outcome.code, 1);
  const json& row = outcome.report["rows"][0];
  EXPECT_EQ(row["name"], "BM_Summarize/1024");
  EXPECT_NEAR(row["change_pct"].get<double>(), 25, 0.5);
  EXPECT_EQ(compare(base_path, base_path, request).code, 0);
  EXPECT_THROW(harness::read_gbench_samples(dir.write("bad.json", "{\"x\": 1}")), InputError);
}

// Google Benchmark JSON is read like any results file: bad entries are named by their index.
TEST(Compare, GoogleBenchmarkEntriesAreChecked) {
  TempDir dir;
  const auto error_of = [&](const std::string& text) {
    const auto path = dir.write("g.json", text);
    try {
      harness::read_gbench_samples(path);
    } catch (const InputError& e) {
      std::string message = e.what();
      return message.substr(dir.path().string().size() + 1);
    }
    return std::string("no error");
  };
  const auto one = [](const std::string& fields) {
    return "{\"benchmarks\": [{\"name\": \"BM_a\", \"real_time\": 5}, {\"name\": \"BM_b\"" +
           fields + "}]}";
  };
  EXPECT_EQ(error_of(one(", \"real_time\": -3")),
            "g.json: benchmarks[1] (\"BM_b\"): real_time is -3 (must be a finite time >= 0)");
  EXPECT_EQ(error_of(one(", \"real_time\": 1e999")),
            "g.json: malformed JSON: number overflow parsing '1e999'");
  EXPECT_EQ(error_of(one(", \"real_time\": \"fast\"")),
            "g.json: benchmarks[1] (\"BM_b\"): real_time is \"fast\", not a number");
  EXPECT_EQ(error_of(one("")), "g.json: benchmarks[1] (\"BM_b\"): missing \"real_time\"");
  EXPECT_EQ(error_of(one(", \"real_time\": 1, \"time_unit\": \"h\"")),
            "g.json: benchmarks[1] (\"BM_b\"): unknown Google Benchmark time_unit 'h'");
  EXPECT_EQ(error_of("{\"benchmarks\": [{\"name\": \"BM_a\", \"real_time\": NaN}]}"),
            "g.json:1:47: malformed JSON: syntax error while parsing value - invalid literal; "
            "last read: '\"real_time\": N'");
  EXPECT_EQ(error_of("{\"benchmarks\": [{\"name\": \"BM_a\", \"real_time\": 5}]}"), "no error");
}

}  // namespace
