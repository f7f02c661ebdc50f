#include "harness/analysis/sequential_gate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace harness {
namespace {

TEST(SequentialGate, LooksDoubleUpToTheBudget) {
  EXPECT_EQ(look_schedule(4, 32), (std::vector<long long>{4, 8, 16, 32}));
  EXPECT_EQ(look_schedule(10, 40), (std::vector<long long>{10, 20, 40}));
  EXPECT_EQ(look_schedule(10, 25), (std::vector<long long>{10, 20, 25}));
  EXPECT_EQ(look_schedule(8, 8), (std::vector<long long>{8}));
}

TEST(SequentialGate, AlphaIsSpentEvenly) {
  EXPECT_DOUBLE_EQ(alpha_per_look(0.05, 4), 0.0125);
  EXPECT_DOUBLE_EQ(alpha_per_look(0.05, 1), 0.05);
}

std::vector<double> runs(double level, double spread, size_t n, std::mt19937_64& random) {
  std::normal_distribution<double> normal(0, spread);
  std::vector<double> out;
  for (size_t i = 0; i < n; ++i) out.push_back(level * std::exp(normal(random)));
  return out;
}

Comparison compare(double change, double spread, size_t n, double alpha, unsigned seed) {
  std::mt19937_64 random(seed);
  CompareOptions options;
  options.alpha = alpha;
  return compare_sample_sets(
      {{"p", "s", "iteration", runs(10, spread, n, random), 0}},
      {{"p", "s", "iteration", runs(10 * (1 + change), spread, n, random), 0}}, options);
}

TEST(SequentialGate, UndecidedRowsAreUnresolvedOrTooFew) {
  EXPECT_TRUE(has_undecided_row(compare(0.09, 0.06, 8, 0.05, 3)));    // wide: unresolved
  EXPECT_TRUE(has_undecided_row(compare(0.09, 0.01, 3, 0.0125, 1)));  // no interval at 3
  EXPECT_FALSE(has_undecided_row(compare(0.09, 0.01, 12, 0.0125, 1)));
  EXPECT_EQ(compare(0.09, 0.01, 12, 0.0125, 1).rows[0].verdict, Verdict::regression);
}

TEST(SequentialGate, RunsNeededScaleWithTheIntervalsWidth) {
  const Comparison wide = compare(0.09, 0.06, 8, 0.05, 3);
  ASSERT_EQ(wide.rows[0].verdict, Verdict::unresolved);
  const auto needed = runs_needed(wide.rows[0], 5);
  ASSERT_TRUE(needed);
  EXPECT_GT(*needed, 8);
  // Hand-worked from the row's own figures: 8 x (half-width / distance to +-5%)^2.
  const CompareRow& row = wide.rows[0];
  const double half = (row.change_high_pct - row.change_low_pct) / 2;
  const double distance = std::min(std::fabs(row.change_pct - 5), std::fabs(row.change_pct + 5));
  EXPECT_EQ(*needed, (long long)std::ceil(8 * (half / distance) * (half / distance)));
  // With that many runs a side, the same change and spread decide (most draws; this one does).
  EXPECT_FALSE(has_undecided_row(compare(0.09, 0.06, size_t(*needed) * 2, 0.05, 3)));
  // No interval: nothing to scale.
  EXPECT_FALSE(runs_needed(compare(0.09, 0.01, 3, 0.0125, 1).rows[0], 5));
}

}  // namespace
}  // namespace harness
