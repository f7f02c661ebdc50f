// What a simulated rank holds (simulator/rank_memory.h), by hand: 4 layers of 1 MB of parameters
// whose forwards keep 1, 2, 3 and 4 MB a sample for backward.
#include "simulator/rank_memory.h"

#include <gtest/gtest.h>

#include "tests/simulator/test_costs.h"

namespace harness::simulator {
namespace {

constexpr double kMB = 1e6;

LayerCosts kept_costs() {
  LayerCosts costs = testing::chain(4, 1e-3, 2e-3, 0, kMB);
  add_held_bytes(costs, {{1 * kMB, 2 * kMB, 3 * kMB, 4 * kMB}, {}, {}});
  return costs;
}

// Layers 0-1 and 2-3 on `replicas` ranks each, 4 micro-batches over 8 samples.
PipelineSystem two_stages(PipelineSchedule schedule, int replicas) {
  PipelineSystem system;
  system.schedule = schedule;
  system.micro_batches = 4;
  system.global_batch = 8;
  for (int s = 0; s < 2; ++s) {
    PipelineStage stage{{2 * s, 2 * s + 1}, {}};
    for (int r = 0; r < replicas; ++r) stage.ranks.push_back(s * replicas + r);
    system.stages.push_back(stage);
  }
  return system;
}

TEST(RankMemory, AReplicaHoldsEveryStateAndItsBatchsActivations) {
  const RankMemory held = replicated_memory(kept_costs(), 2);
  EXPECT_DOUBLE_EQ(held.parameter_bytes, 4 * kMB);
  EXPECT_DOUBLE_EQ(held.gradient_bytes, 4 * kMB);
  EXPECT_DOUBLE_EQ(held.optimizer_state_bytes, 8 * kMB);  // AdamW's two moments
  EXPECT_DOUBLE_EQ(held.activation_bytes.value(), 2 * 10 * kMB);
  EXPECT_DOUBLE_EQ(held.total(), 36 * kMB);
  // The largest backward working memory on top: layer 3's 3 MB a sample.
  LayerCosts working = testing::chain(4, 1e-3, 2e-3, 0, kMB);
  add_held_bytes(working, {{1 * kMB, 2 * kMB, 3 * kMB, 4 * kMB}, {}, {kMB, kMB, 2 * kMB, 3 * kMB}});
  EXPECT_DOUBLE_EQ(replicated_memory(working, 2).activation_bytes.value(), 2 * (10 + 3) * kMB);
  // A measured profile says nothing of what its layers keep.
  EXPECT_FALSE(replicated_memory(testing::chain(4, 1e-3, 2e-3, 0, kMB), 2).activation_bytes);
}

// 2 samples a micro-batch: stage 0 keeps 6 MB of each, stage 1 14 MB. Under 1F1B stage 0 holds
// 2 micro-batches at most (12 MB), stage 1 one (14 MB); under GPipe all 4 (24 and 56 MB). Each
// stage's states are 2 + 2 + 4 MB; the fullest position is the last stage's.
TEST(RankMemory, APipelinesFullestPositionHoldsWhatItsScheduleKeepsInFlight) {
  const RankMemory one_f_one_b =
      pipeline_memory(kept_costs(), two_stages(PipelineSchedule::kDapple, 1), 0);
  EXPECT_DOUBLE_EQ(one_f_one_b.activation_bytes.value(), 14 * kMB);
  EXPECT_DOUBLE_EQ(one_f_one_b.total(), 22 * kMB);
  const RankMemory gpipe =
      pipeline_memory(kept_costs(), two_stages(PipelineSchedule::kGpipe, 1), 0);
  EXPECT_DOUBLE_EQ(gpipe.activation_bytes.value(), 56 * kMB);
  // 2 replicas a stage: 1 sample a micro-batch (7 MB on stage 1), ZeRO-3 halving every state.
  const RankMemory sharded =
      pipeline_memory(kept_costs(), two_stages(PipelineSchedule::kDapple, 2), 3);
  EXPECT_DOUBLE_EQ(sharded.parameter_bytes, 1 * kMB);
  EXPECT_DOUBLE_EQ(sharded.gradient_bytes, 1 * kMB);
  EXPECT_DOUBLE_EQ(sharded.optimizer_state_bytes, 2 * kMB);
  EXPECT_DOUBLE_EQ(sharded.activation_bytes.value(), 7 * kMB);
  const RankMemory zero1 =
      pipeline_memory(kept_costs(), two_stages(PipelineSchedule::kDapple, 2), 1);
  EXPECT_DOUBLE_EQ(zero1.parameter_bytes + zero1.gradient_bytes, 4 * kMB);
  EXPECT_DOUBLE_EQ(zero1.optimizer_state_bytes, 2 * kMB);
}

// ZB-H1 over the two stages (its action lists: stage 0 F0 F1 I0 W0 F2 I1 W1 F3 I2 W2 I3 W3,
// stage 1 F0 I0 F1 I1 W0 F2 I2 W1 F3 I3 W2 W3) with each layer's I holding half its stored
// bytes until W: stage 1 keeps 14 MB a micro-batch from F and 7 more from I. After F1 and I1
// it holds micro-batches 0 and 1 whole: 42 MB; without what I holds, 28.
TEST(RankMemory, AZeroBubbleStageHoldsWhatItsIKeepsUntilW) {
  LayerCosts costs = testing::chain(4, 1e-3, 2e-3, 0, kMB);
  add_held_bytes(
      costs, {{1 * kMB, 2 * kMB, 3 * kMB, 4 * kMB}, {0.5 * kMB, 1 * kMB, 1.5 * kMB, 2 * kMB}, {}});
  const PipelineSystem zb = two_stages(PipelineSchedule::kZbH1, 1);
  EXPECT_DOUBLE_EQ(pipeline_memory(costs, zb, 0).activation_bytes.value(), 42 * kMB);
  EXPECT_DOUBLE_EQ(pipeline_memory(kept_costs(), zb, 0).activation_bytes.value(), 28 * kMB);
  // 1F1B has no I: what an I would hold changes nothing.
  EXPECT_DOUBLE_EQ(
      pipeline_memory(costs, two_stages(PipelineSchedule::kDapple, 1), 0).activation_bytes.value(),
      14 * kMB);
}

// Each backward part adds its stage's largest layer working memory while it runs: 1, 1, 2 and 3
// MB a sample, 2 and 6 MB a micro-batch. Under 1F1B stage 1 (F0 B0 F1 B1 ...) holds 14 MB when
// each B starts, 20 with it; stage 0 (F0 F1 B0 F2 B1 ...) 12, and 14.
TEST(RankMemory, ABackwardAddsItsWorkingMemoryWhileItRuns) {
  LayerCosts costs = testing::chain(4, 1e-3, 2e-3, 0, kMB);
  add_held_bytes(costs, {{1 * kMB, 2 * kMB, 3 * kMB, 4 * kMB}, {}, {kMB, kMB, 2 * kMB, 3 * kMB}});
  const RankMemory held = pipeline_memory(costs, two_stages(PipelineSchedule::kDapple, 1), 0);
  EXPECT_DOUBLE_EQ(held.activation_bytes.value(), 20 * kMB);
}

TEST(RankMemory, StoredBytesCoverEveryLayer) {
  LayerCosts costs = testing::chain(4, 1e-3, 2e-3, 0, kMB);
  EXPECT_THROW(add_held_bytes(costs, {{1, 2, 3}, {}, {}}), std::invalid_argument);
  EXPECT_THROW(add_held_bytes(costs, {{1, 2, 3, -4}, {}, {}}), std::invalid_argument);
  EXPECT_THROW(add_held_bytes(costs, {{1, 2, 3, 4}, {1, 2}, {}}), std::invalid_argument);
  EXPECT_THROW(add_held_bytes(costs, {{1, 2, 3, 4}, {}, {1, 2, 3}}), std::invalid_argument);
}

}  // namespace
}  // namespace harness::simulator
