#include "harness/history/change_points.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "harness/history/student_t.h"

namespace harness {
namespace {

// Reference values from scipy 1.16 (scipy.special.betainc, scipy.stats.t.sf and
// ttest_ind_from_stats, which otava calls).
TEST(StudentT, IncompleteBetaMatchesScipy) {
  EXPECT_NEAR(regularized_incomplete_beta(2.5, 0.5, 0.3), 0.018927124071945658, 1e-13);
  EXPECT_NEAR(regularized_incomplete_beta(30, 0.5, 0.99), 0.43933436890525074, 1e-13);
  EXPECT_EQ(regularized_incomplete_beta(2, 3, 0), 0);
  EXPECT_EQ(regularized_incomplete_beta(2, 3, 1), 1);
}

TEST(StudentT, TwoSidedPMatchesScipy) {
  EXPECT_NEAR(student_t_two_sided_p(2.5, 3), 0.08770664700806555, 1e-13);
  EXPECT_NEAR(student_t_two_sided_p(-0.3, 40), 0.7657307167710191, 1e-13);
  EXPECT_EQ(student_t_two_sided_p(0, 5), 1);
  EXPECT_EQ(student_t_two_sided_p(INFINITY, 5), 0);
}

TEST(StudentT, PooledTestMatchesTtestIndFromStats) {
  EXPECT_NEAR(pooled_t_test_p({10, 1, 5}, {12, 1.5, 7}), 0.02732292020295862, 1e-13);
  // One point on a side: its variance counts for nothing, the other's carries the test.
  EXPECT_NEAR(pooled_t_test_p({100, 2, 20}, {101, 2, 1}), 0.6311685209121967, 1e-13);
  EXPECT_EQ(pooled_t_test_p({1, 0, 1}, {2, 0, 1}), 1);  // no degrees of freedom
  EXPECT_EQ(pooled_t_test_p({1, 0, 3}, {2, 0, 3}), 0);  // constant and different
  EXPECT_EQ(pooled_t_test_p({1, 0, 3}, {1, 0, 3}), 1);  // constant and equal
}

// Worked by hand: [1, 1, 3, 3] split after two points is two constant halves 2 apart.
TEST(ChangePoints, QHatByHand) {
  const std::vector<double> series{1, 1, 3, 3};
  EXPECT_DOUBLE_EQ(q_hat(series, 0, 2, 4), 4);          // 2/4 * 8
  EXPECT_DOUBLE_EQ(q_hat(series, 0, 1, 4), 1);          // 2/4 * 4 - 2/(4*2) * 4
  EXPECT_DOUBLE_EQ(q_hat(series, 0, 2, 3), 8.0 / 3.0);  // 2/3 * 4
  EXPECT_DOUBLE_EQ(q_hat(series, 0, 3, 4), 1);          // 2/4 * 4 - 2/(4*2) * 4
  const Candidate best = best_division(series, 0, 4);
  EXPECT_EQ(best.index, 2u);
  EXPECT_DOUBLE_EQ(best.qhat, 4);
  // Within a sub-range: [3, 3, 1] of [1, 3, 3, 1] divides before the 1.
  const Candidate tail = best_division({1, 3, 3, 1}, 1, 4);
  EXPECT_EQ(tail.index, 3u);
}

std::vector<double> noisy_step(size_t n, size_t at, double change, double noise, unsigned seed) {
  std::mt19937_64 random(seed);
  std::normal_distribution<double> normal(0, noise);
  std::vector<double> values;
  for (size_t i = 0; i < n; ++i)
    values.push_back(100 * (1 + normal(random)) * (i >= at ? 1 + change : 1));
  return values;
}

TEST(ChangePoints, FindsAStepWhereItIs) {
  const auto points = change_points(noisy_step(40, 25, 0.10, 0.01, 7), {});
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].index, 25u);
  EXPECT_NEAR(points[0].mean_after / points[0].mean_before, 1.10, 0.01);
  EXPECT_LT(points[0].pvalue, 0.001);
  EXPECT_NEAR(points[0].magnitude(), 0.10, 0.01);
}

TEST(ChangePoints, NoneInNoiseOrTooFewPoints) {
  EXPECT_TRUE(change_points(noisy_step(60, 60, 0, 0.02, 3), {}).empty());
  EXPECT_TRUE(change_points({1, 5}, {}).empty());
  EXPECT_TRUE(change_points({}, {}).empty());
}

TEST(ChangePoints, WindowsFindStepsFarApart) {
  // Steps at 40 and 140 of 200: each window of 50 sees at most one.
  std::vector<double> series = noisy_step(200, 40, 0.08, 0.01, 11);
  for (size_t i = 140; i < series.size(); ++i) series[i] *= 0.9;
  const auto points = change_points(series, {});
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].index, 40u);
  EXPECT_EQ(points[1].index, 140u);
}

TEST(ChangePoints, MinMagnitudeMergesSmallChanges) {
  const std::vector<double> series = noisy_step(60, 30, 0.03, 0.002, 5);
  ASSERT_EQ(change_points(series, {}).size(), 1u);
  ChangePointOptions options;
  options.min_magnitude = 0.05;  // a 3% change is below it
  EXPECT_TRUE(change_points(series, options).empty());
}

TEST(ChangePoints, StricterLevelFindsFewer) {
  const std::vector<double> series = noisy_step(30, 15, 0.02, 0.01, 9);
  ChangePointOptions loose, strict;
  loose.max_pvalue = 0.05;
  strict.max_pvalue = 1e-9;
  EXPECT_FALSE(change_points(series, loose).empty());
  EXPECT_TRUE(change_points(series, strict).empty());
}

}  // namespace
}  // namespace harness
