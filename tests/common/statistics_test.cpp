// Percentiles with linear interpolation, checked against hand-computed values (the same as
// numpy.percentile(x, q) with its default method).
#include "common/statistics.h"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using harness::percentile;
using harness::summarize;

TEST(Percentile, InterpolatesBetweenClosestRanks) {
  const std::vector<double> x = {15, 20, 35, 40, 50};
  // h = q/100 * (n-1): q=40 -> h=1.6 -> 20 + 0.6*(35-20) = 29
  EXPECT_DOUBLE_EQ(percentile(x, 40), 29.0);
  EXPECT_DOUBLE_EQ(percentile(x, 50), 35.0);
  // q=90 -> h=3.6 -> 40 + 0.6*10 = 46
  EXPECT_DOUBLE_EQ(percentile(x, 90), 46.0);
  EXPECT_DOUBLE_EQ(percentile(x, 0), 15.0);
  EXPECT_DOUBLE_EQ(percentile(x, 100), 50.0);
}

TEST(Percentile, OrderOfInputDoesNotMatter) {
  EXPECT_DOUBLE_EQ(percentile({3, 1, 4, 1, 5, 9, 2, 6}, 95),
                   percentile({1, 1, 2, 3, 4, 5, 6, 9}, 95));
  // numpy.percentile([1,1,2,3,4,5,6,9], 95) = 6 + 0.65*3 = 7.95
  EXPECT_NEAR(percentile({3, 1, 4, 1, 5, 9, 2, 6}, 95), 7.95, 1e-12);
}

TEST(Percentile, SingleSampleAndErrors) {
  EXPECT_DOUBLE_EQ(percentile({7}, 99), 7.0);
  EXPECT_THROW(percentile({}, 50), std::invalid_argument);
  EXPECT_THROW(percentile({1, 2}, 101), std::invalid_argument);
}

TEST(Summary, AllFieldsOfOneToHundred) {
  std::vector<double> x;
  for (int i = 100; i >= 1; --i) x.push_back(i);
  const auto s = summarize(x);
  EXPECT_EQ(s.count, 100u);
  EXPECT_DOUBLE_EQ(s.mean, 50.5);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 100);
  EXPECT_DOUBLE_EQ(s.p50, 50.5);   // h = 49.5
  EXPECT_DOUBLE_EQ(s.p90, 90.1);   // h = 89.1
  EXPECT_DOUBLE_EQ(s.p95, 95.05);  // h = 94.05
  EXPECT_DOUBLE_EQ(s.p99, 99.01);  // h = 98.01
  // Sample standard deviation of 1..100: sqrt(100*101/12) = 29.011491975882...
  EXPECT_NEAR(s.stddev, std::sqrt(100.0 * 101.0 / 12.0), 1e-9);
}

TEST(Summary, EmptyInputGivesZeroCount) {
  const auto s = summarize({});
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.mean, 0.0);
}

}  // namespace
