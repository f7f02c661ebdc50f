// Co-located copies' operator times combined for HiDup's measured cost model
// (`harness-rank spmd-times --co-located N`): each time is the slowest copy's.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "runtime/profile/spmd_operator_times.h"

namespace {

runtime::SpmdTimes times_of(
    std::vector<std::vector<runtime::SpmdTransformer::OperatorSeconds>> plans, double step) {
  runtime::SpmdTimes times;
  times.plans = std::move(plans);
  times.step_seconds_per_parameter_byte = step;
  return times;
}

TEST(SpmdOperatorTimes, SlowestOfTakesEachTimeFromTheCopyThatTookLongest) {
  // Two plans; the copies are slowest on different operators and passes.
  const auto a = times_of({{{1.0, 2.0}, {3.0, 1.0}}, {{0.5, 0.5}}}, 4e-9);
  const auto b = times_of({{{2.0, 1.5}, {1.0, 4.0}}, {{0.25, 0.75}}}, 3e-9);
  const auto c = times_of({{{1.5, 2.5}, {2.0, 2.0}}, {{0.75, 0.25}}}, 5e-9);
  const runtime::SpmdTimes slowest = runtime::slowest_of({a, b, c});
  ASSERT_EQ(slowest.plans.size(), 2u);
  ASSERT_EQ(slowest.plans[0].size(), 2u);
  EXPECT_EQ(slowest.plans[0][0].forward, 2.0);
  EXPECT_EQ(slowest.plans[0][0].backward, 2.5);
  EXPECT_EQ(slowest.plans[0][1].forward, 3.0);
  EXPECT_EQ(slowest.plans[0][1].backward, 4.0);
  EXPECT_EQ(slowest.plans[1][0].forward, 0.75);
  EXPECT_EQ(slowest.plans[1][0].backward, 0.75);
  EXPECT_EQ(slowest.step_seconds_per_parameter_byte, 5e-9);
  // One copy is its own slowest.
  EXPECT_EQ(runtime::slowest_of({a}).plans[0][1].forward, 3.0);
}

TEST(SpmdOperatorTimes, SlowestOfRefusesCopiesThatTimedDifferentPlans) {
  const auto two_operators = times_of({{{1.0, 2.0}, {3.0, 1.0}}}, 1e-9);
  const auto one_operator = times_of({{{1.0, 2.0}}}, 1e-9);
  const auto two_plans = times_of({{{1.0, 2.0}, {3.0, 1.0}}, {{1.0, 1.0}}}, 1e-9);
  EXPECT_THROW(runtime::slowest_of({two_operators, one_operator}), std::invalid_argument);
  EXPECT_THROW(runtime::slowest_of({two_operators, two_plans}), std::invalid_argument);
  EXPECT_THROW(runtime::slowest_of({}), std::invalid_argument);
}

}  // namespace
