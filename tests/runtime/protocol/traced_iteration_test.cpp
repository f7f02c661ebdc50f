// Which traced iteration a run writes: a window from the middle of the run, the iteration in it
// nearest the run's median (the earliest among equals), and the recorder keeping only its events.
#include "runtime/protocol/traced_iteration.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "runtime/protocol/trace_recorder.h"

namespace traced_iteration_test {

using runtime::nearest_to_median;

TEST(TracedIteration, TheWindowIsTheMiddleOfTheRunAtMostSixteen) {
  const runtime::TraceWindow long_run = runtime::middle_trace_window(2, 40);
  EXPECT_EQ(long_run.first, 2 + 12);  // (40 - 16) / 2 after the warm-up
  EXPECT_EQ(long_run.count, 16);
  const runtime::TraceWindow short_run = runtime::middle_trace_window(3, 5);
  EXPECT_EQ(short_run.first, 3);
  EXPECT_EQ(short_run.count, 5);
  EXPECT_EQ(runtime::middle_trace_window(3, 0).first, -1);
}

TEST(TracedIteration, NearestTheMedianOfEveryMeasuredIteration) {
  // Sorted 10, 11, 12, 30, 50: the median 12. Traced: iterations 1-3 (30, 12, 11).
  const auto chosen = nearest_to_median({10, 30, 12, 11, 50}, 1, 3);
  EXPECT_EQ(chosen.iteration, 2);
  EXPECT_EQ(chosen.iteration_ms, 12);
  EXPECT_EQ(chosen.median_ms, 12);
  EXPECT_EQ(chosen.measured, 5u);
  EXPECT_EQ(chosen.traced, 3);
  // An outlier in the middle is passed over: the median of 2, 2, 32, 2, 2 is 2.
  EXPECT_EQ(nearest_to_median({2, 2, 32, 2.1, 2}, 2, 2).iteration, 3);
  // 1, 3, 5, 7: the median 4 (linear interpolation); 3 and 5 as near: the earlier.
  EXPECT_EQ(nearest_to_median({1, 3, 5, 7}, 1, 2).iteration, 1);
  EXPECT_THROW(nearest_to_median({1, 3}, 1, 2), std::invalid_argument);
  EXPECT_THROW(nearest_to_median({1, 3}, -1, 1), std::invalid_argument);
}

TEST(TracedIteration, TheRecorderKeepsTheChosenIterationOnly) {
  runtime::TraceRecorder trace;
  trace.set_enabled(true);
  for (long long it = 0; it < 3; ++it) {
    trace.set_iteration(it);
    trace.add("forward " + std::to_string(it), runtime::TraceCategory::kForward, 10.0 * it,
              10.0 * it + 5);
  }
  EXPECT_EQ(trace.size(), 3u);
  trace.keep_iteration(1);
  ASSERT_EQ(trace.size(), 1u);
  const nlohmann::json doc = trace.to_json({{"rank", 0}});
  int complete = 0;
  for (const auto& event : doc.at("traceEvents")) {
    if (event.at("ph") != "X") continue;
    ++complete;
    EXPECT_EQ(event.at("name"), "forward 1");
    EXPECT_EQ(event.at("ts"), 10.0);
  }
  EXPECT_EQ(complete, 1);
  const auto other = runtime::traced_iteration_json(nearest_to_median({10, 30, 12}, 0, 3));
  EXPECT_EQ(other.at("iteration"), 2);
  EXPECT_EQ(other.at("median_iteration_ms"), 12.0);
  EXPECT_EQ(other.at("traced_iterations"), 3);
}

}  // namespace traced_iteration_test
