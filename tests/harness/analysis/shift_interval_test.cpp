// The Hodges-Lehmann shift and its interval against hand-computed values, and both errors of
// the verdict it gives: how often it excludes a shift of 0 that is true (A/A) and how often it
// finds one that is there (A/B).
#include <gtest/gtest.h>

#include <random>

#include "harness/analysis/mann_whitney.h"
#include "harness/analysis/shift_interval.h"

namespace {

using harness::hodges_lehmann_shift;
using harness::shift_interval;

TEST(ShiftInterval, HodgesLehmannIsTheMedianOfPairwiseDifferences) {
  // new - base over all pairs: 2-1, 2-2, 2-3, 4-1, 4-2, 4-3 = 1 0 -1 3 2 1; median (1 + 1) / 2.
  EXPECT_DOUBLE_EQ(hodges_lehmann_shift({1, 2, 3}, {2, 4}), 1);
  // Odd count: 5 - (1, 2, 10) = 4 3 -5; median 3. One wild base run moves it by no more.
  EXPECT_DOUBLE_EQ(hodges_lehmann_shift({1, 2, 10}, {5}), 3);
}

TEST(ShiftInterval, FiveAgainstFiveUsesTheExactCriticalValue) {
  // n1 = n2 = 5: P(U <= 2) = (1 + 1 + 2) / C(10, 5) = 4 / 252 <= 0.025 < P(U <= 3) = 7 / 252,
  // so C = 2 and the interval runs from the 3rd smallest to the 3rd largest of 25 differences,
  // with coverage 1 - 8 / 252. Differences (20 + j) - (10 + i) = 10 + j - i take 6 once, 7
  // twice, 8 three times, ..., 14 once: the 3rd smallest is 7, the 3rd largest 13.
  const auto interval = shift_interval({10, 11, 12, 13, 14}, {20, 21, 22, 23, 24}, 0.05);
  ASSERT_TRUE(interval);
  EXPECT_DOUBLE_EQ(interval->estimate, 10);
  EXPECT_DOUBLE_EQ(interval->low, 7);
  EXPECT_DOUBLE_EQ(interval->high, 13);
  EXPECT_NEAR(interval->confidence, 1 - 8.0 / 252, 1e-12);
  EXPECT_TRUE(interval->exact);
  // The null distribution it rests on: 1, 1, 2, 3, 5 arrangements for U = 0..4.
  const auto counts = harness::u_null_counts(5, 5);
  ASSERT_EQ(counts.size(), 26u);
  EXPECT_EQ(std::vector<double>(counts.begin(), counts.begin() + 5),
            (std::vector<double>{1, 1, 2, 3, 5}));
}

TEST(ShiftInterval, TooFewRunsGiveNoInterval) {
  // 3 against 3: even the most extreme arrangement has P = 2 / 20 = 0.1 > 0.05.
  EXPECT_FALSE(shift_interval({1, 2, 3}, {4, 5, 6}, 0.05));
  // 4 against 4: P(U = 0) = 1 / 70, so C = 0: the interval spans min to max of the differences.
  const auto four = shift_interval({1, 2, 3, 4}, {11, 12, 13, 14}, 0.05);
  ASSERT_TRUE(four);
  EXPECT_DOUBLE_EQ(four->low, 7);
  EXPECT_DOUBLE_EQ(four->high, 13);
  EXPECT_EQ(harness::fewest_runs_for_interval(0.05), 4u);
  EXPECT_EQ(harness::fewest_runs_for_interval(0.01), 5u);  // 2 / 70 > 0.01 >= 2 / 252
}

TEST(ShiftInterval, LargeSidesUseTheNormalApproximation) {
  // 30 against 30: C = floor(450 - 1.959964 sqrt(900 * 61 / 12)) = floor(317.43) = 317, so
  // the interval starts at the 318th smallest difference. Differences 100 + j - i (i, j in
  // 0..29): 71 once, 72 twice, ..., the first m values 71..70+m counting m(m+1)/2; that reaches
  // 318 at m = 25 (300 < 318 <= 325), so the 318th is 95, and by symmetry the 318th largest 105.
  std::vector<double> base, candidate;
  for (int i = 0; i < 30; ++i) {
    base.push_back(i);
    candidate.push_back(100 + i);
  }
  const auto interval = shift_interval(base, candidate, 0.05);
  ASSERT_TRUE(interval);
  EXPECT_FALSE(interval->exact);
  EXPECT_DOUBLE_EQ(interval->estimate, 100);
  EXPECT_DOUBLE_EQ(interval->low, 95);
  EXPECT_DOUBLE_EQ(interval->high, 105);
  EXPECT_DOUBLE_EQ(interval->confidence, 0.95);
}

// A/A: 6 runs a side from one distribution, 4000 times: the interval misses 0 no more often
// than its stated coverage allows (binomial sd at 4000 trials: 0.0031).
TEST(ShiftInterval, AaCoverageMatchesTheStatedConfidence) {
  std::mt19937 engine(7);
  std::lognormal_distribution<double> run(0, 0.03);
  int missed = 0;
  double confidence = 0;
  const int trials = 4000;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> a(6), b(6);
    for (auto& x : a) x = run(engine);
    for (auto& x : b) x = run(engine);
    const auto interval = shift_interval(a, b, 0.05);
    confidence = interval->confidence;
    missed += interval->low > 0 || interval->high < 0;
  }
  // n = 6 a side: U = 0..5 count 1, 1, 2, 3, 5, 7 of C(12, 6) = 924 arrangements, 19 in all
  // (<= 0.025 x 924 = 23.1 < 30 with U = 6), so C = 5 and the coverage is 1 - 38 / 924.
  EXPECT_NEAR(confidence, 1 - 38.0 / 924, 1e-12);
  EXPECT_NEAR(static_cast<double>(missed) / trials, 1 - confidence, 0.012);
}

// A/B: a shift of 3 run standard deviations is found (the interval excludes 0) in almost
// every trial with 6 runs a side.
TEST(ShiftInterval, AbFindsAShiftOfThreeSpreads) {
  std::mt19937 engine(11);
  std::normal_distribution<double> run(100, 1);
  int found = 0;
  const int trials = 1000;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> a(6), b(6);
    for (auto& x : a) x = run(engine);
    for (auto& x : b) x = run(engine) + 3;
    const auto interval = shift_interval(a, b, 0.05);
    found += interval->low > 0;
    EXPECT_LT(interval->low, interval->high);
  }
  EXPECT_GT(found, 950);
}

}  // namespace
