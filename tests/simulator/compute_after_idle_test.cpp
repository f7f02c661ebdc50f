// Compute after a wait: the curve from a profile's medians, its interpolation, the mix of
// curves over a task's layers, and the engine pricing a rank's first forward and backward
// after an idle stretch -- every number hand-computed.
#include <gtest/gtest.h>

#include <stdexcept>

#include "simulator/compute_after_idle.h"
#include "simulator/engine.h"
#include "simulator/layer_costs.h"
#include "simulator/task_graph.h"

namespace harness::simulator {
namespace {

// Gaps 4 and 10 ms: forward 2 ms back to back, 3 and 4 ms after them (1.5x, 2x); backward 4,
// then 4 and 6 ms (1x, 1.5x).
AfterIdleCurve test_curve() { return after_idle_curve({0, 4, 10}, {2, 3, 4}, {4, 4, 6}); }

TEST(AfterIdleCurve, RatiosOfMediansInterpolatedLinearly) {
  const AfterIdleCurve curve = test_curve();
  ASSERT_EQ(curve.gap_s, (std::vector<double>{0.004, 0.010}));
  EXPECT_DOUBLE_EQ(curve.ratio(0.0, false), 1.0);     // no idle
  EXPECT_DOUBLE_EQ(curve.ratio(0.002, false), 1.25);  // from (0, 1) to (4 ms, 1.5)
  EXPECT_DOUBLE_EQ(curve.ratio(0.004, false), 1.5);
  EXPECT_NEAR(curve.ratio(0.0062, false), 1.5 + 0.5 * 2.2 / 6, 1e-12);
  EXPECT_NEAR(curve.ratio(0.0062, true), 1.0 + 0.5 * 2.2 / 6, 1e-12);
  EXPECT_DOUBLE_EQ(curve.ratio(1.0, false), 2.0);  // beyond the last gap: the last ratio
  EXPECT_DOUBLE_EQ(curve.ratio(1.0, true), 1.5);
  EXPECT_DOUBLE_EQ(AfterIdleCurve{}.ratio(0.5, false), 1.0);
}

TEST(AfterIdleCurve, AFasterPassAfterAGapIsNoise) {
  // 0.9 ms after 1 ms against 1 ms back to back: taken as 1.
  const AfterIdleCurve curve = after_idle_curve({0, 1}, {1, 0.9}, {2, 2.4});
  EXPECT_DOUBLE_EQ(curve.forward[0], 1.0);
  EXPECT_DOUBLE_EQ(curve.backward[0], 1.2);
}

TEST(AfterIdleCurve, RefusesWhatIsNotAMeasurement) {
  EXPECT_THROW(after_idle_curve({0}, {1}, {1}), std::invalid_argument);
  EXPECT_THROW(after_idle_curve({1, 2}, {1, 1}, {1, 1}), std::invalid_argument);
  EXPECT_THROW(after_idle_curve({0, 5, 5}, {1, 1, 1}, {1, 1, 1}), std::invalid_argument);
  EXPECT_THROW(after_idle_curve({0, 5}, {1, 0}, {1, 1}), std::invalid_argument);
  EXPECT_THROW(after_idle_curve({0, 5}, {1, 1}, {1}), std::invalid_argument);
}

TEST(AfterIdleCurve, MixWeighsEachLayerByItsTime) {
  // Layer A (forward 3 s, backward 1 s) on test_curve, layer B (forward 1 s, backward 1 s) on
  // a curve with one gap, 2 ms: forward 3x, backward 2x; layer C (1 s, 2 s) unmeasured.
  const AfterIdleCurve a = test_curve();
  const AfterIdleCurve b = after_idle_curve({0, 2}, {1, 3}, {1, 2});
  const AfterIdleCurve mixed = mix_after_idle({&a, &b, nullptr}, {3, 1, 1}, {1, 1, 2});
  ASSERT_EQ(mixed.gap_s, (std::vector<double>{0.002, 0.004, 0.010}));
  // At 2 ms: A 1.25 / 1, B 3 / 2, C 1: forward (3 x 1.25 + 3 + 1) / 5, backward (1 + 2 + 2) / 4.
  EXPECT_DOUBLE_EQ(mixed.forward[0], 7.75 / 5);
  EXPECT_DOUBLE_EQ(mixed.backward[0], 5.0 / 4);
  // At 10 ms: A 2 / 1.5, B 3 / 2.
  EXPECT_DOUBLE_EQ(mixed.forward[2], (6.0 + 3 + 1) / 5);
  EXPECT_DOUBLE_EQ(mixed.backward[2], (1.5 + 2 + 2) / 4);
  // Between breakpoints the mix is the mix of the curves (each linear there).
  EXPECT_NEAR(mixed.ratio(0.007, false),
              (3 * a.ratio(0.007, false) + b.ratio(0.007, false) + 1) / 5, 1e-12);
  EXPECT_TRUE(mix_after_idle({nullptr}, {1}, {1}).empty());
}

TEST(AfterIdleCurve, LayerRangesOfAProfile) {
  LayerCosts costs;
  costs.ids = {"node1", "node2", "node3"};
  costs.forward_s = {1, 1, 2};
  costs.backward_s = {1, 1, 2};
  costs.order = {0, 1, 2};
  EXPECT_TRUE(costs.after_idle_of({0, 1, 2}).empty());
  add_after_idle(costs, 1, 2, after_idle_curve({0, 4}, {1, 2}, {1, 3}));
  EXPECT_EQ(costs.after_idle_of_layer, (std::vector<int>{-1, 0, 0}));
  // Layers 0-1: forward (1 x 1 + 1 x 2) / 2 at 4 ms.
  EXPECT_DOUBLE_EQ(costs.after_idle_of({0, 1}).forward[0], 1.5);
  EXPECT_DOUBLE_EQ(costs.after_idle_of({1, 2}).backward[0], 3.0);
  EXPECT_THROW(add_after_idle(costs, 2, 3, test_curve()), std::invalid_argument);
}

// Two ranks on a machine with infinitely fast ports: rank 1's forward waits for rank 0's
// 2-second forward (a dependency standing for the activation's receive), then its backward and
// a second forward follow back to back.
TEST(AfterIdleCurve, TheEnginePricesTheFirstForwardAndBackwardAfterAWait) {
  ClusterConfig config;
  config.gpus_per_machine = {2};
  const Cluster cluster(config);
  for (const bool priced : {false, true}) {
    TaskGraph graph(2);
    // Gaps in seconds here: forward 1.5x after 1 s, 2x after 4 s; backward 1.2x, 1.8x.
    const int curve =
        graph.add_after_idle_curve(after_idle_curve({0, 1000, 4000}, {1, 1.5, 2}, {1, 1.2, 1.8}));
    const int f0 = graph.add_compute(0, TaskCategory::kForward, 2.0);
    const int f1 = graph.add_compute(1, TaskCategory::kForward, 1.0);
    const int b1 = graph.add_compute(1, TaskCategory::kBackward, 1.0);
    const int f1b = graph.add_compute(1, TaskCategory::kForward, 1.0);
    graph.depend(f1, f0);
    if (priced) {
      for (int task : {f0, f1, b1, f1b}) graph.set_after_idle(task, curve);
    }
    const TaskTimes times = run_tasks(cluster, graph);
    // Rank 0 starts the iteration computing: no idle, 2 s. Rank 1 idles 2 s: forward 1.5 +
    // 0.5 x 1/3 = 1.667x, its backward (the first of the stretch) 1.2 + 0.6 / 3 = 1.4x, the
    // second forward warm.
    const double f1_s = priced ? 1.5 + 0.5 / 3 : 1.0;
    const double b1_s = priced ? 1.4 : 1.0;
    EXPECT_DOUBLE_EQ(times.end[f0], 2.0);
    EXPECT_NEAR(times.end[f1], 2.0 + f1_s, 1e-12) << priced;
    EXPECT_NEAR(times.end[b1], 2.0 + f1_s + b1_s, 1e-12);
    EXPECT_NEAR(times.end[f1b], 3.0 + f1_s + b1_s, 1e-12);
  }
}

TEST(AfterIdleCurve, OnlyForwardAndBackwardTasksArePriced) {
  TaskGraph graph(1);
  const int curve = graph.add_after_idle_curve(test_curve());
  const int step = graph.add_compute(0, TaskCategory::kStep, 1.0);
  EXPECT_THROW(graph.set_after_idle(step, curve), std::invalid_argument);
  EXPECT_EQ(graph.add_after_idle_curve(AfterIdleCurve{}), -1);
  const int forward = graph.add_compute(0, TaskCategory::kForward, 1.0);
  EXPECT_THROW(graph.set_after_idle(forward, curve + 1), std::invalid_argument);
}

}  // namespace
}  // namespace harness::simulator
