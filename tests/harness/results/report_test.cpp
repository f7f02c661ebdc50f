// harness report: the tables it rebuilds are byte for byte what the run wrote, their numbers
// are the fixture's, and report.md indexes tables, planner outputs and figures.
#include "harness/cli/report_command.h"

#include <gtest/gtest.h>

#include <sstream>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/json_file.h"
#include "harness/study/experiment_runner.h"
#include "tests/harness/results/report_fixture.h"
#include "tests/test_util.h"

namespace {

namespace fs = std::filesystem;
using harness::read_file;
using harness_test::FixtureRun;
using harness_test::TempDir;
using nlohmann::json;

FixtureRun bucket_sweep_run() {
  FixtureRun run;
  run.experiment = "sweep";
  run.systems = {"overlap", "sync", "async"};
  run.axes = {{"ddp.bucket_mb", {"1", "5", "25"}}};
  return run;
}

TEST(Report, RebuildsTheRunsTablesByteForByte) {
  TempDir dir;
  const fs::path run = harness_test::write_fixture_run(dir.path(), bucket_sweep_run());
  harness::write_summary_files(run);  // what `harness run` does at its end
  std::map<std::string, std::string> written;
  for (const char* file : {"summary.json", "table.md", "table.csv"}) {
    written[file] = read_file(run / file);
    fs::remove(run / file);
  }
  std::ostringstream out;
  EXPECT_EQ(harness::run_report(run, out), 0);
  for (const auto& [file, bytes] : written) EXPECT_EQ(read_file(run / file), bytes) << file;
  EXPECT_TRUE(fs::exists(run / "report.md"));

  // A stale table is replaced, not kept.
  harness::write_file_atomic(run / "table.md", "stale\n");
  harness::run_report(run, out);
  EXPECT_EQ(read_file(run / "table.md"), written["table.md"]);
}

// results/reference/ci_regression was written by `harness run experiments/ci_regression.yaml`
// at the revision before the restructure (b15cd2e): today's code must rebuild its tables to
// the byte, whatever moved where. (It was once the regression gate's stored baseline; the gate
// now runs both builds in one job, harness ab, and a stored folder serves trend plots only.)
TEST(Report, RebuildsTablesOfAFolderWrittenBeforeTheRestructureByteForByte) {
  const fs::path reference = HARNESS_REFERENCE_RESULTS;
  ASSERT_TRUE(fs::exists(reference / "manifest.json")) << reference;
  TempDir dir;
  const fs::path run = dir.path() / "run";
  fs::copy(reference, run, fs::copy_options::recursive);
  std::map<std::string, std::string> written;
  for (const char* file : {"summary.json", "table.md", "table.csv"}) {
    written[file] = read_file(run / file);
    fs::remove(run / file);
  }
  std::ostringstream out;
  EXPECT_EQ(harness::run_report(run, out), 0);
  for (const auto& [file, bytes] : written) EXPECT_EQ(read_file(run / file), bytes) << file;
  // The figures it lists and the samples it pooled are the run's own.
  EXPECT_NE(read_file(run / "table.md").find("| sync | 80 |"), std::string::npos);
}

TEST(Report, TablesHoldTheFixturesNumbers) {
  TempDir dir;
  FixtureRun spec;
  spec.systems = {"overlap"};
  spec.world_size = 1;
  spec.iterations = 5;
  spec.sample = [](size_t, size_t, long long, long long i) { return 10.0 + i; };  // 10..14
  const fs::path run = harness_test::write_fixture_run(dir.path(), spec);
  std::ostringstream out;
  harness::run_report(run, out);
  const json summary = harness::parse_json(read_file(run / "summary.json"));
  const json& iteration = summary["points"][0]["systems"][0]["phases"]["iteration"];
  EXPECT_EQ(iteration["count"], 5);
  EXPECT_DOUBLE_EQ(iteration["mean"].get<double>(), 12);
  EXPECT_DOUBLE_EQ(iteration["p90"].get<double>(), 13.6);  // 13 + 0.6 * (14 - 13)
  EXPECT_NE(read_file(run / "table.md").find("| overlap (baseline) | 5 | 12.00 | — | 12.00 |"),
            std::string::npos);
}

TEST(Report, IndexListsTablesFiguresAndPoints) {
  TempDir dir;
  const fs::path run = harness_test::write_fixture_run(dir.path(), bucket_sweep_run());
  harness::write_file_atomic(run / "plots" / "figures.json",
                             harness::json_text(json::array(
                                 {{{"kind", "cdf"},
                                   {"title", "sweep: CDF of iteration latency (ddp.bucket_mb=1)"},
                                   {"png", "plots/cdf_p000.png"},
                                   {"svg", "plots/cdf_p000.svg"},
                                   {"data", "plots/cdf_p000.dat"},
                                   {"script", "plots/cdf_p000.gp"}}})));
  std::ostringstream out;
  harness::run_report(run, out);
  const std::string report = read_file(run / "report.md");
  EXPECT_NE(report.find("# Report: sweep"), std::string::npos);
  EXPECT_NE(report.find("- [table.md](table.md)"), std::string::npos);
  EXPECT_NE(report.find("- [table.csv](table.csv)"), std::string::npos);
  EXPECT_NE(report.find("- [summary.json](summary.json)"), std::string::npos);
  EXPECT_NE(report.find("![sweep: CDF of iteration latency (ddp.bucket_mb=1)](plots/cdf_p000.png)"),
            std::string::npos);
  EXPECT_NE(report.find("[script](plots/cdf_p000.gp)"), std::string::npos);
  EXPECT_NE(report.find("| p002 | ddp.bucket_mb=25 | 2 | 1 | 10 | 0 | [raw/p002/](raw/p002/) |"),
            std::string::npos)
      << report;
}

TEST(Report, PlanFolderIsIndexedWithoutTables) {
  TempDir dir;
  fs::copy(fs::path(HARNESS_TEST_DATA) / "report" / "plan", dir.path() / "plan",
           fs::copy_options::recursive);
  std::ostringstream out;
  harness::run_report(dir.path() / "plan", out);
  const std::string report = read_file(dir.path() / "plan" / "report.md");
  EXPECT_NE(report.find("[resnet50/hierarchical/plan.csv](resnet50/hierarchical/plan.csv)"),
            std::string::npos)
      << report;
  EXPECT_FALSE(fs::exists(dir.path() / "plan" / "table.md"));
  EXPECT_NE(report.find("No figures yet"), std::string::npos);
}

TEST(Report, NotAResultsFolderIsAnInputError) {
  TempDir dir;
  std::ostringstream out;
  EXPECT_THROW(harness::run_report(dir.path(), out), harness::InputError);
  EXPECT_THROW(harness::run_report(dir.path() / "missing", out), harness::InputError);
}

}  // namespace
