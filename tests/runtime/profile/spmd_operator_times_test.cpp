// Co-located copies' operator times combined for HiDup's measured cost model
// (`harness-rank spmd-times --co-located N`): each time the slowest copy's, and at least the
// copies' CPU time over the cores they share.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "runtime/profile/spmd_operator_times.h"

namespace {

using Seconds = runtime::SpmdTransformer::OperatorSeconds;

runtime::SpmdTimes times_of(std::vector<std::vector<Seconds>> plans, double step, double step_cpu) {
  runtime::SpmdTimes times;
  times.plans = std::move(plans);
  times.step_seconds_per_parameter_byte = step;
  times.step_cpu_seconds_per_parameter_byte = step_cpu;
  return times;
}

TEST(SpmdOperatorTimes, EachTimeIsTheSlowestCopysWhereTheCoresAreEnough) {
  // Two plans; the copies are slowest on different operators and passes, and compute less than
  // their wall time (their CPU time summed over 2 cores stays below the slowest wall time).
  const auto a =
      times_of({{{1.0, 2.0, 0.5, 0.5}, {3.0, 1.0, 0.5, 0.5}}, {{0.5, 0.5, 0.2, 0.2}}}, 4e-9, 2e-9);
  const auto b = times_of({{{2.0, 1.5, 0.5, 0.5}, {1.0, 4.0, 0.5, 0.5}}, {{0.25, 0.75, 0.3, 0.2}}},
                          3e-9, 2e-9);
  const runtime::SpmdTimes slowest = runtime::slowest_of({a, b}, 2);
  ASSERT_EQ(slowest.plans.size(), 2u);
  ASSERT_EQ(slowest.plans[0].size(), 2u);
  EXPECT_EQ(slowest.plans[0][0].forward, 2.0);
  EXPECT_EQ(slowest.plans[0][0].backward, 2.0);
  EXPECT_EQ(slowest.plans[0][1].forward, 3.0);
  EXPECT_EQ(slowest.plans[0][1].backward, 4.0);
  EXPECT_EQ(slowest.plans[1][0].forward, 0.5);
  EXPECT_EQ(slowest.plans[1][0].backward, 0.75);
  EXPECT_EQ(slowest.step_seconds_per_parameter_byte, 4e-9);
  // The CPU times are the most one copy took.
  EXPECT_EQ(slowest.plans[1][0].forward_cpu, 0.3);
  EXPECT_EQ(slowest.step_cpu_seconds_per_parameter_byte, 2e-9);
  // One copy alone is its own slowest.
  EXPECT_EQ(runtime::slowest_of({a}, 2).plans[0][1].forward, 3.0);
}

TEST(SpmdOperatorTimes, CopiesThatOutnumberTheCoresTakeTheirCpuTimeOverTheCores) {
  // Four copies on 2 cores, each computing 1 ms of a forward that the first two ran alone
  // (1.0 ms) and the last two in 1.5: none can have ended before 4 x 1 ms / 2 cores.
  std::vector<runtime::SpmdTimes> copies;
  for (double wall : {1.0e-3, 1.0e-3, 1.5e-3, 1.5e-3}) {
    copies.push_back(times_of({{{wall, 0.5e-3, 1.0e-3, 0.25e-3}}}, 2e-9, 1e-9));
  }
  const runtime::SpmdTimes combined = runtime::slowest_of(copies, 2);
  EXPECT_DOUBLE_EQ(combined.plans[0][0].forward, 2.0e-3);
  EXPECT_DOUBLE_EQ(combined.plans[0][0].backward, 0.5e-3);  // 4 x 0.25 / 2 is no later
  EXPECT_DOUBLE_EQ(combined.plans[0][0].forward_cpu, 1.0e-3);
  EXPECT_DOUBLE_EQ(combined.step_seconds_per_parameter_byte, 2e-9);
  EXPECT_DOUBLE_EQ(runtime::slowest_of(copies, 1).step_seconds_per_parameter_byte, 4e-9);
}

TEST(SpmdOperatorTimes, SlowestOfRefusesCopiesThatTimedDifferentPlans) {
  const auto two_operators = times_of({{{1.0, 2.0}, {3.0, 1.0}}}, 1e-9, 1e-9);
  const auto one_operator = times_of({{{1.0, 2.0}}}, 1e-9, 1e-9);
  const auto two_plans = times_of({{{1.0, 2.0}, {3.0, 1.0}}, {{1.0, 1.0}}}, 1e-9, 1e-9);
  EXPECT_THROW(runtime::slowest_of({two_operators, one_operator}, 2), std::invalid_argument);
  EXPECT_THROW(runtime::slowest_of({two_operators, two_plans}, 2), std::invalid_argument);
  EXPECT_THROW(runtime::slowest_of({}, 2), std::invalid_argument);
  EXPECT_THROW(runtime::slowest_of({two_operators}, 0), std::invalid_argument);
}

}  // namespace
