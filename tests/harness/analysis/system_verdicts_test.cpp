// A study's systems judged against its baseline over runs: each run's median iteration, the
// Hodges-Lehmann shift with its interval, and no verdict where the runs cannot carry one.
#include "harness/analysis/system_verdicts.h"

#include <gtest/gtest.h>

#include <cmath>

namespace harness {
namespace {

// A system whose runs' iterations are `runs` (one vector of iteration times per run).
SystemSamples system_of(const std::string& name, const std::vector<std::vector<double>>& runs) {
  SystemSamples system;
  system.name = name;
  for (const auto& iterations : runs) system.runs.push_back({{"iteration", iterations}});
  system.complete_runs = static_cast<long long>(runs.size());
  return system;
}

ResultSamples study_of(std::vector<SystemSamples> systems) {
  ResultSamples samples;
  samples.manifest.baseline = "base";
  PointSamples point;
  point.point.label = "default";
  point.systems = std::move(systems);
  samples.points.push_back(std::move(point));
  return samples;
}

TEST(SystemVerdicts, EachRunCountsOnceByItsMedianIteration) {
  // Every base run's median is 10 ms, every new run's 12 ms, whatever its other iterations:
  // the shift of the logarithms is ln 1.2 exactly, +20%, and so is its whole interval.
  std::vector<std::vector<double>> base, slow;
  for (int r = 0; r < 5; ++r) {
    base.push_back({9, 10, 10 + r});
    slow.push_back({12, 12, 30 + r});
  }
  const auto verdicts = system_verdicts(
      study_of({system_of("base", base), system_of("slow", slow), system_of("fast", base)}), 0.05);
  ASSERT_EQ(verdicts.size(), 2u);
  EXPECT_EQ(verdicts[0].system, "slow");
  EXPECT_EQ(verdicts[0].kind, SystemVerdictKind::slower);
  EXPECT_EQ(verdicts[0].baseline_runs, 5u);
  EXPECT_EQ(verdicts[0].system_runs, 5u);
  EXPECT_NEAR(verdicts[0].change_pct, 20.0, 1e-9);
  EXPECT_NEAR(*verdicts[0].low_pct, 20.0, 1e-9);
  EXPECT_NEAR(*verdicts[0].high_pct, 20.0, 1e-9);
  // The same runs as the baseline: an interval around 0, no difference.
  EXPECT_EQ(verdicts[1].kind, SystemVerdictKind::no_difference);
  EXPECT_NEAR(verdicts[1].change_pct, 0.0, 1e-9);
}

TEST(SystemVerdicts, RunsTooFewForAnIntervalGiveNoVerdict) {
  const std::vector<std::vector<double>> three = {{10}, {11}, {12}};
  const std::vector<std::vector<double>> three_slower = {{20}, {21}, {22}};
  const std::vector<std::vector<double>> one = {{10, 11, 12, 13}};
  const auto verdicts =
      system_verdicts(study_of({system_of("base", three), system_of("three", three_slower),
                                system_of("one", one), system_of("failed", {})}),
                      0.05);
  ASSERT_EQ(verdicts.size(), 3u);
  // 3 against 3 at 0.05: the most extreme arrangement has probability 0.1, no interval.
  EXPECT_EQ(verdicts[0].kind, SystemVerdictKind::too_few_runs);
  EXPECT_FALSE(verdicts[0].low_pct.has_value());
  EXPECT_EQ(verdicts[1].kind, SystemVerdictKind::one_run);
  EXPECT_EQ(verdicts[2].kind, SystemVerdictKind::no_runs);
  const std::string text = render_system_verdicts(verdicts, "base", 0.05);
  EXPECT_NE(text.find("| default | three | 3 | 3 | +"), std::string::npos) << text;
  EXPECT_NE(text.find("too few runs for an interval (4 each needed): no verdict |"),
            std::string::npos)
      << text;
  // One run of median 11.5 against 10, 11, 12: the median of the log ratios, ln(11.5 / 11).
  EXPECT_NE(text.find("| default | one | 1 | 3 | +4.5% | one run: no verdict |"), std::string::npos)
      << text;
  EXPECT_NE(text.find("| default | failed | 0 | 3 | — | no complete run: no verdict |"),
            std::string::npos)
      << text;
}

TEST(SystemVerdicts, AStudyOfSingleRunsSaysSoInOneLine) {
  const auto verdicts = system_verdicts(
      study_of({system_of("base", {{10, 10}}), system_of("a", {{12}}), system_of("b", {{8}})}),
      0.05);
  ASSERT_EQ(verdicts.size(), 2u);
  EXPECT_EQ(render_system_verdicts(verdicts, "base", 0.05),
            "### Systems against the baseline, over runs\n\n"
            "One run of each system (run.repeats: 1): no verdict. The delta% above compares "
            "iterations of one process each, which are not independent samples; run.repeats: 4 "
            "or more gives each system's change against base a 95% interval.\n\n");
}

TEST(SystemVerdicts, NoBaselineOrOneSystemGivesNothing) {
  ResultSamples alone = study_of({system_of("base", {{10}})});
  EXPECT_TRUE(system_verdicts(alone, 0.05).empty());
  ResultSamples elsewhere = study_of({system_of("x", {{10}}), system_of("y", {{10}})});
  EXPECT_TRUE(system_verdicts(elsewhere, 0.05).empty());
  EXPECT_EQ(render_system_verdicts({}, "base", 0.05), "");
}

}  // namespace
}  // namespace harness
