// Sharded data parallelism in the simulator, by hand: 4 layers of 30 MiB parameters (forward
// 5 ms, backward 10 ms), each its own unit, on 2 ranks of one machine at 10 GB/s, a 1 ms step
// (each rank steps half). A = 30 MiB / 10 GB/s is one unit's all-reduce; its all-gather and its
// reduce-scatter are one ring step of half of it each, A/2.
#include "simulator/sharded_system.h"

#include <gtest/gtest.h>

#include "tests/simulator/test_costs.h"

namespace harness::simulator {
namespace {

using baselines::ZeroStage;

struct FourUnits {
  LayerCosts costs = testing::chain(4, 5e-3, 10e-3, 0, 30.0 * 1024 * 1024);
  double a = 30.0 * 1024 * 1024 / 10e9;
  ComputeNoise none;

  ClusterConfig config = testing::one_machine_at_10_gbps(2);

  SimulatedIteration run(ZeroStage stage, bool prefetch = true,
                         runtime::ShardUnitKind unit = runtime::ShardUnitKind::kLayer) {
    ShardedSystem system;
    system.world = 2;
    system.stage = stage;
    system.prefetch = prefetch;
    system.unit = unit;
    system.step_s = 1e-3;
    return simulate_sharded(Cluster(config), costs, system, none);
  }
};

using testing::tasks_of;

TEST(ShardedSystem, StageThreeHidesPrefetchedGathersBehindCompute) {
  FourUnits setup;
  const double a = setup.a;
  const SimulatedIteration it = setup.run(ZeroStage::kParameters);
  // Forward: the first gather (A/2) is exposed, the others run under the layer before. Backward:
  // the last unit is gathered again after forward (A/2) and the one before it behind it (A/2);
  // each later gather and reduce-scatter hides under a backward; the last reduce-scatter
  // (A/2) and the half step follow: 20 + 40 ms + A/2 + A/2 + A/2 + 0.5 ms.
  EXPECT_NEAR(it.times.makespan, 60e-3 + 1.5 * a + 0.5e-3, 1e-12);
  EXPECT_EQ(tasks_of(it, TaskCategory::kAllGather), 8);  // twice per unit
  EXPECT_EQ(tasks_of(it, TaskCategory::kReduceScatter), 4);
  EXPECT_NEAR(it.ranks[0].step_ms, 0.5, 1e-9);
}

// When rank 0's `nth` task of `category` started, in ms.
double start_ms(const SimulatedIteration& it, TaskCategory category, int nth) {
  const std::vector<Task>& tasks = it.graph.tasks();
  for (size_t t = 0; t < tasks.size(); ++t) {
    if (tasks[t].category == category && tasks[t].rank == 0 && nth-- == 0)
      return it.times.start[t] * 1e3;
  }
  return -1;
}

TEST(ShardedSystem, StageThreePrefetchesOneUnitAhead) {
  FourUnits setup;
  // Forward 10 ms a unit; the first three units gather in 1 ms (20 MB, one ring step of half at
  // 10 GB/s), the last in 15 ms (300 MB). The runtime queues unit 3's gather as forward enters
  // unit 2, at 21 ms (1 ms for the first gather, then 2 x 10), so unit 3 computes from 36 ms, not
  // from 31 as it would had every gather been queued at once.
  setup.costs = testing::chain(4, 10e-3, 10e-3);
  setup.costs.parameter_bytes = {20e6, 20e6, 20e6, 300e6};
  const SimulatedIteration it = setup.run(ZeroStage::kParameters);
  EXPECT_NEAR(start_ms(it, TaskCategory::kForward, 2), 21.0, 1e-9);
  EXPECT_NEAR(start_ms(it, TaskCategory::kAllGather, 3), 21.0, 1e-9);
  EXPECT_NEAR(start_ms(it, TaskCategory::kForward, 3), 36.0, 1e-9);
}

TEST(ShardedSystem, StageThreeWithoutPrefetchWaitsForEveryGather) {
  FourUnits setup;
  // Every gather exposed (8 x A/2), and every reduce-scatter too (4 x A/2): each one delays
  // the next unit's gather, queued behind it on the channel.
  const SimulatedIteration it = setup.run(ZeroStage::kParameters, false);
  EXPECT_NEAR(it.times.makespan, 60e-3 + 6 * setup.a + 0.5e-3, 1e-12);
}

TEST(ShardedSystem, StageThreeWithTheModelAsOneUnitHidesNothing) {
  FourUnits setup;
  // One unit of 4 x 30 MiB: its gather (4 x A/2) before forward, again before backward, and its
  // reduce-scatter (4 x A/2) after it, none of them under compute; then the half step.
  const SimulatedIteration it =
      setup.run(ZeroStage::kParameters, true, runtime::ShardUnitKind::kModel);
  EXPECT_NEAR(it.times.makespan, 60e-3 + 6 * setup.a + 0.5e-3, 1e-12);
  EXPECT_EQ(tasks_of(it, TaskCategory::kAllGather), 2);
  EXPECT_EQ(tasks_of(it, TaskCategory::kReduceScatter), 1);
}

TEST(ShardedSystem, StageTwoReduceScattersBehindBackwardAndGathersAfterTheStep) {
  FourUnits setup;
  // The last reduce-scatter (A/2) exposed, the half step, then four gathers in a row (4 x A/2).
  const SimulatedIteration it = setup.run(ZeroStage::kGradients);
  EXPECT_NEAR(it.times.makespan, 60e-3 + 0.5 * setup.a + 0.5e-3 + 2 * setup.a, 1e-12);
  EXPECT_EQ(tasks_of(it, TaskCategory::kAllGather), 4);
  EXPECT_EQ(tasks_of(it, TaskCategory::kReduceScatter), 4);
  EXPECT_EQ(tasks_of(it, TaskCategory::kAllReduce), 0);
}

TEST(ShardedSystem, StageOneIsDdpWithAHalfStepAndTheGathers) {
  FourUnits setup;
  // DDP's overlapped buckets (the last all-reduce, A, exposed), the half step, four gathers.
  const SimulatedIteration it = setup.run(ZeroStage::kOptimizerState);
  EXPECT_NEAR(it.times.makespan, 60e-3 + setup.a + 0.5e-3 + 2 * setup.a, 1e-12);
  EXPECT_EQ(tasks_of(it, TaskCategory::kAllReduce), 4);
  EXPECT_EQ(tasks_of(it, TaskCategory::kAllGather), 4);
}

TEST(ShardedSystem, MeasuredReduceScatterFitPricesItsSteps) {
  FourUnits setup;
  // A reduce-scatter fit of 1 ms per step and 5 GB/s (comm.json's reducescatter): each one
  // takes 1 ms + A; the last one is exposed. The gathers keep the links' A/2.
  setup.config.scatter.step_latency_s = 1e-3;
  setup.config.scatter.rate_cap = 5e9;
  const SimulatedIteration it = setup.run(ZeroStage::kGradients);
  EXPECT_NEAR(it.times.makespan, 60e-3 + 1e-3 + setup.a + 0.5e-3 + 2 * setup.a, 1e-12);
}

TEST(ShardedSystem, ReduceScattersTimedSizeBySizeRunAtTheirSizesRate) {
  FourUnits setup;
  // Measured at a quarter and at 4 x a unit's 30 MiB: 2.5 and 10 GB/s of bus bandwidth; a
  // unit's reduce-scatter runs at the rate between them in log bytes, 6.25 GB/s: one ring step
  // of 15 MiB, 0.8 A. The last one is exposed; the gathers keep the links' A/2.
  const double unit = 30.0 * 1024 * 1024;
  setup.config.scatter.rate_by_bytes = {{unit / 4, 2.5e9}, {unit * 4, 10e9}};
  setup.config.scatter.step_latency_s = 0;
  const SimulatedIteration it = setup.run(ZeroStage::kGradients);
  EXPECT_NEAR(it.times.makespan, 60e-3 + 0.8 * setup.a + 0.5e-3 + 2 * setup.a, 1e-12);
}

TEST(ClusterConfig, RatesBySizeInterpolateInLogBytesAndHoldBeyond) {
  const std::vector<std::pair<double, double>> rates = {{1e6, 1e9}, {1e8, 3e9}};
  EXPECT_DOUBLE_EQ(ClusterConfig::rate_at(rates, 1e7), 2e9);
  EXPECT_DOUBLE_EQ(ClusterConfig::rate_at(rates, 1e3), 1e9);
  EXPECT_DOUBLE_EQ(ClusterConfig::rate_at(rates, 1e9), 3e9);
  EXPECT_DOUBLE_EQ(ClusterConfig::rate_at({}, 1e7), 0.0);
}

TEST(ShardedSystem, UnitsAreTheLayersWithParameters) {
  LayerCosts costs = testing::chain(3, 1e-3, 1e-3, 0, 400);
  costs.parameter_bytes[1] = 0;  // a ReLU
  const baselines::ShardLayout layout = shard_layout_of(costs, 3, runtime::ShardUnitKind::kLayer);
  ASSERT_EQ(layout.units.size(), 2u);
  EXPECT_EQ(layout.units[0].name, "node0");
  EXPECT_EQ(layout.units[0].shard_elements, 34);  // ceil(100 / 3)
  // The whole model as one unit: both layers' 100 elements in one buffer.
  const baselines::ShardLayout whole = shard_layout_of(costs, 3, runtime::ShardUnitKind::kModel);
  ASSERT_EQ(whole.units.size(), 1u);
  EXPECT_EQ(whole.units[0].name, "model");
  EXPECT_EQ(whole.units[0].numels, (std::vector<int64_t>{100, 100}));
  EXPECT_EQ(whole.units[0].shard_elements, 67);  // ceil(200 / 3)
}

}  // namespace
}  // namespace harness::simulator
