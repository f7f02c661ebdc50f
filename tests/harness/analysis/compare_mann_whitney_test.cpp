// Mann-Whitney U: statistic and p-values against values computed by hand (midranks, tie
// correction, continuity correction) and scipy's documented example.
#include "harness/analysis/mann_whitney.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace {

using harness::mann_whitney_u;
using harness::MannWhitneyMethod;

TEST(MannWhitney, SeparatedSamplesExact) {
  // Every y beats every x: U_x = 0, U_y = 9; P(U <= 0) = 1 / C(6, 3) = 1/20, two-sided 0.1.
  const auto r = mann_whitney_u({1, 2, 3}, {4, 5, 6});
  EXPECT_DOUBLE_EQ(r.u1, 0);
  EXPECT_DOUBLE_EQ(r.u2, 9);
  EXPECT_TRUE(r.exact);
  EXPECT_FALSE(r.ties);
  EXPECT_NEAR(r.p_value, 0.1, 1e-12);
  // 5 vs 5: 2 / C(10, 5) = 2/252.
  EXPECT_NEAR(mann_whitney_u({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}).p_value, 2.0 / 252, 1e-12);
}

TEST(MannWhitney, InterleavedExact) {
  // x = 1,3,5 beats y in (3,2) (5,2) (5,4): U_x = 3. The U distribution for 3 vs 3 counts
  // 1,1,2,3,3,3,3,2,1,1 arrangements for U = 0..9, so P(U <= 3) = 7/20 and p = 0.7.
  const auto r = mann_whitney_u({1, 3, 5}, {2, 4, 6});
  EXPECT_DOUBLE_EQ(r.u1, 3);
  EXPECT_DOUBLE_EQ(r.u2, 6);
  EXPECT_NEAR(r.p_value, 0.7, 1e-12);
  // The test is symmetric in its samples.
  const auto swapped = mann_whitney_u({2, 4, 6}, {1, 3, 5});
  EXPECT_DOUBLE_EQ(swapped.u1, 6);
  EXPECT_NEAR(swapped.p_value, 0.7, 1e-12);
}

TEST(MannWhitney, ScipyDocumentedExample) {
  // scipy.stats.mannwhitneyu docs: males vs females, U1 = 17; exact p = 0.1111 (= 14/126),
  // asymptotic with continuity correction 0.11134688653314041.
  const std::vector<double> males = {19, 22, 16, 29, 24};
  const std::vector<double> females = {20, 11, 17, 12};
  const auto exact = mann_whitney_u(males, females);
  EXPECT_DOUBLE_EQ(exact.u1, 17);
  EXPECT_TRUE(exact.exact);
  EXPECT_NEAR(exact.p_value, 14.0 / 126, 1e-12);
  const auto normal = mann_whitney_u(males, females, MannWhitneyMethod::asymptotic);
  EXPECT_FALSE(normal.exact);
  EXPECT_NEAR(normal.p_value, 0.11134688653314041, 1e-12);
}

TEST(MannWhitney, TiesUseMidranksAndTieCorrectedVariance) {
  // Pooled: 1x 2x 2x 2y 3x 3y 4y 5y. Midranks: 1, 3, 3, 3, 5.5, 5.5, 7, 8.
  // R_x = 1 + 3 + 3 + 5.5 = 12.5, U_x = 12.5 - 4*5/2 = 2.5, U_y = 16 - 2.5 = 13.5.
  // Ties t = 3 and t = 2: sum(t^3 - t) = 30. sigma^2 = 16/12 * (9 - 30/56) = 11.2857142857.
  // z = (|2.5 - 8| - 0.5) / sigma = 1.4883513944689681, p = erfc(z / sqrt 2) = 0.136658247738.
  const auto r = mann_whitney_u({1, 2, 2, 3}, {2, 3, 4, 5});
  EXPECT_TRUE(r.ties);
  EXPECT_FALSE(r.exact);  // no exact distribution with ties
  EXPECT_DOUBLE_EQ(r.u1, 2.5);
  EXPECT_DOUBLE_EQ(r.u2, 13.5);
  EXPECT_NEAR(r.z, 1.4883513944689681, 1e-12);
  EXPECT_NEAR(r.p_value, 0.13665824773814753, 1e-12);
}

TEST(MannWhitney, LargeSamplesUseTheNormalApproximation) {
  // x = 0..24, y = 10.5..34.5: x beats y when i - j >= 11, sum_{k=1..14} k = 105 pairs.
  // sigma^2 = 25*25*51/12 = 2656.25; z = (312.5 - 105 - 0.5) / 51.5388... = 4.016389950601674.
  std::vector<double> x, y;
  for (int i = 0; i < 25; ++i) {
    x.push_back(i);
    y.push_back(i + 10.5);
  }
  const auto r = mann_whitney_u(x, y);
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(r.u1, 105);
  EXPECT_NEAR(r.z, 4.016389950601674, 1e-12);
  EXPECT_NEAR(r.p_value, 5.909644085596031e-05, 1e-15);
}

TEST(MannWhitney, AllTiedMeansNoEvidence) {
  const auto r = mann_whitney_u({5, 5, 5}, {5, 5});
  EXPECT_DOUBLE_EQ(r.u1, 3);
  EXPECT_DOUBLE_EQ(r.p_value, 1);
}

TEST(MannWhitney, ExactAgreesWithNormalForModerateSamples) {
  // 20 vs 20 without ties: the exact and approximate p-values are close (a consistency check
  // of the counting recurrence against an independent formula).
  std::vector<double> x, y;
  for (int i = 0; i < 20; ++i) {
    x.push_back(i * 2.0);
    y.push_back(i * 2.0 + 7.1);
  }
  const auto exact = mann_whitney_u(x, y);
  const auto normal = mann_whitney_u(x, y, MannWhitneyMethod::asymptotic);
  ASSERT_TRUE(exact.exact);
  EXPECT_NEAR(exact.p_value, normal.p_value, 0.01);
  EXPECT_LT(exact.p_value, 0.5);
}

TEST(MannWhitney, EmptySampleIsAnError) {
  EXPECT_THROW(mann_whitney_u({}, {1.0}), std::invalid_argument);
}

}  // namespace
