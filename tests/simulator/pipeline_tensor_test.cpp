// A tensor axis inside pipeline stages, by hand: an embedding, 2 transformer blocks and a head
// (forward 1 ms, backward 2 ms each at the profile's one sample; every output 10 MB) cut into 2
// stages (embedding and block 0, block 1 and the head), each on one tensor group of 2 ranks
// (world 4), one micro-batch of one sample, GPipe, on one machine at 10 GB/s without latency
// and a free step. A = 10 MB / 10 GB/s = 1 ms: a ring all-reduce of a block's output over 2
// ranks, or a hand-over of it between the stages; an all-gather or a reduce-scatter is A/2.
#include <gtest/gtest.h>

#include "simulator/pipeline_system.h"
#include "tests/simulator/test_costs.h"

namespace harness::simulator {
namespace {

using testing::tasks_of;

// The all-reduces the ranks' compute waits in (the replicas' sums are not).
int blocking_all_reduces(const SimulatedIteration& it) {
  int n = 0;
  for (const Task& task : it.graph.tasks())
    n += task.category == TaskCategory::kAllReduce && task.blocking;
  return n;
}

struct TwoStagesOfTwoSlices {
  LayerCosts costs = testing::two_block_decoder();
  ComputeNoise none;

  SimulatedIteration run(bool sequence_parallel, int recompute_every = 0,
                         bool recompute_gather = false) {
    ClusterConfig config;
    config.gpus_per_machine = {4};
    config.intra_bandwidth = 10e9;
    config.intra_latency_s = 0;
    PipelineSystem system;
    system.stages = {{{0, 1}, {0}}, {{2, 3}, {1}}};  // ranks: tensor groups 0 and 1
    system.schedule = PipelineSchedule::kGpipe;
    system.tensor = 2;
    system.tensor_comm.sequence_parallel = sequence_parallel;
    system.tensor_comm.recompute_gather = recompute_gather;
    system.recompute_every = recompute_every;
    return simulate_pipeline(Cluster(config), costs, system, 4, none);
  }
};

TEST(PipelineTensor, EachStagesBlocksWaitInTheirGroupsCollectives) {
  TwoStagesOfTwoSlices setup;
  const SimulatedIteration it = setup.run(false);
  // Stage 0's forward (2 ms) and its block's pair (2 A), the hand-over (A), stage 1's block
  // (1 ms), its pair (2 A) and the head (1 ms); back: the head and block 1 (4 ms), the pair
  // (2 A), the hand-over (A), block 0 (2 ms), its pair (2 A), the embedding (2 ms): 22 ms.
  EXPECT_NEAR(it.times.makespan, 22e-3, 1e-12);
  EXPECT_EQ(blocking_all_reduces(it), 8);  // 2 blocks x 2 passes x 2
  // Slice j of each stage hands over to slice j of the other: 2 lanes x 2 directions.
  int transfers = 0;
  for (const Task& task : it.graph.tasks()) {
    if (task.kind != TaskKind::kTransfer) continue;
    ++transfers;
    EXPECT_EQ(task.peer % 2, task.rank % 2) << task.rank << " -> " << task.peer;
    EXPECT_DOUBLE_EQ(task.bytes, 10e6);
  }
  EXPECT_EQ(transfers, 4);
  for (int r = 0; r < 4; ++r) EXPECT_EQ(it.stage_of_rank[r], r / 2);
}

TEST(PipelineTensor, SequenceParallelHandsOnTheTokenShards) {
  TwoStagesOfTwoSlices setup;
  const SimulatedIteration it = setup.run(true);
  // The pairs cost the same 2 A as all-gathers and reduce-scatters; block 1 rejoins the tokens
  // in forward and block 0 gathers their gradient in backward (A/2 each); block 0's output
  // crosses as shards, A/2 each way: 22 - 2 A + 2 x A/2 + 2 x A/2 = 22 ms.
  EXPECT_NEAR(it.times.makespan, 22e-3, 1e-12);
  EXPECT_EQ(tasks_of(it, TaskCategory::kAllGather), 2 * 2 * 2 + 2);
  EXPECT_EQ(tasks_of(it, TaskCategory::kReduceScatter), 2 * 2 * 2);
  for (const Task& task : it.graph.tasks()) {
    if (task.kind == TaskKind::kTransfer) EXPECT_DOUBLE_EQ(task.bytes, 5e6);
  }
}

TEST(PipelineTensor, GatheringAgainAddsTwoAllGathersToEachBlocksBackward) {
  TwoStagesOfTwoSlices setup;
  // The sequence-parallel 22 ms and, in each block's backward, its two entries gathered again
  // (A/2 each): 22 + 2 x 2 x A/2 = 24 ms.
  const SimulatedIteration it = setup.run(true, 0, true);
  EXPECT_NEAR(it.times.makespan, 24e-3, 1e-12);
  EXPECT_EQ(tasks_of(it, TaskCategory::kAllGather), 2 * 2 * 2 + 2 + 2 * 2);
}

TEST(PipelineTensor, AFullyRecomputedBlockWaitsInItsForwardsCollectivesAgain) {
  TwoStagesOfTwoSlices setup;
  // Both blocks' forward pair again in their backward: 22 ms + 2 x 2 A.
  const SimulatedIteration it = setup.run(false, 1);
  EXPECT_NEAR(it.times.makespan, 26e-3, 1e-12);
  EXPECT_EQ(blocking_all_reduces(it), 8 + 4);
}

TEST(PipelineTensor, RefusesGroupsOutsideTheWorldAndAProfileWithoutBlocks) {
  TwoStagesOfTwoSlices setup;
  PipelineSystem system;
  system.stages = {{{0, 1}, {0}}, {{2, 3}, {2}}};  // group 2 of 4 ranks at tensor 2
  system.tensor = 2;
  EXPECT_THROW(validate_pipeline(setup.costs, system, 4), std::invalid_argument);
  system.stages[1].ranks = {1};
  EXPECT_NO_THROW(validate_pipeline(setup.costs, system, 4));
  EXPECT_THROW(validate_pipeline(setup.costs, system, 3), std::invalid_argument);
  setup.costs.names = {"a", "b", "c", "d"};
  EXPECT_THROW(validate_pipeline(setup.costs, system, 4), std::invalid_argument);
}

}  // namespace
}  // namespace harness::simulator
