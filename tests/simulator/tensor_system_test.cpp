// Tensor parallelism in the simulator, by hand: an embedding, 2 transformer blocks and a head
// (forward 1 ms, backward 2 ms each at the profile's one sample; every output 10 MB), split
// over tensor 2 on one machine at 10 GB/s without latency, a 1 ms step. A = 10 MB / 10 GB/s =
// 1 ms is one ring all-reduce of a block's output over 2 ranks (2 steps of half of it); its
// all-gather and its reduce-scatter are one step of half of it each, A/2; the norms' partial
// gradients of sequence parallelism 1 MB each, A/10. A vocabulary split's loss all-reduces 1 MB
// (A/10) and all-gathers 2 MB (A/10).
#include "simulator/tensor_system.h"

#include <gtest/gtest.h>

#include "simulator/data_parallel_system.h"
#include "tests/simulator/test_costs.h"

namespace harness::simulator {
namespace {

struct TwoBlocks {
  LayerCosts costs = testing::two_block_decoder();
  ComputeNoise none;

  ClusterConfig config(int ranks) const {
    ClusterConfig c;
    c.gpus_per_machine = {ranks};
    c.intra_bandwidth = 10e9;
    c.intra_latency_s = 0;
    return c;
  }

  SimulatedIteration run(int world, bool sequence_parallel, int partial_vectors = 0,
                         bool vocabulary_parallel = false, bool recompute_gather = false,
                         int recompute_every = 0) {
    TensorSystem system;
    system.recompute_every = recompute_every;
    system.recompute_gather = recompute_gather;
    system.vocabulary_parallel = vocabulary_parallel;
    system.token_bytes = 1e6;
    system.world = world;
    system.tensor = 2;
    system.sequence_parallel = sequence_parallel;
    system.partial_vectors = partial_vectors;
    system.partial_bytes = 1e6;  // A / 10 each
    system.step_s = 1e-3;
    return simulate_tensor_parallel(Cluster(config(world)), costs, system, none);
  }
};

using testing::tasks_of;

TEST(TensorSystem, SplitBlocksWaitForMegatronsAllReduces) {
  TwoBlocks setup;
  const SimulatedIteration it = setup.run(2, false);
  // Compute 4 x 1 + 4 x 2 ms; each block's forward and backward wait in 2 all-reduces (A
  // each): 2 blocks x 4 A; then the step.
  EXPECT_NEAR(it.times.makespan, 12e-3 + 8e-3 + 1e-3, 1e-12);
  EXPECT_EQ(tasks_of(it, TaskCategory::kAllReduce), 8);
  EXPECT_NEAR(it.ranks[1].forward_ms, 4.0, 1e-9);
}

TEST(TensorSystem, SequenceParallelGathersAndScattersAndRejoinsTheTokens) {
  TwoBlocks setup;
  const SimulatedIteration it = setup.run(2, true);
  // Per block and pass 2 all-gathers and 2 reduce-scatters (A/2 each: the same 2 A), and the
  // tokens gathered where the split layers end (forward) and begin (backward): A/2 each.
  EXPECT_NEAR(it.times.makespan, 21e-3 + 1e-3, 1e-12);
  EXPECT_EQ(tasks_of(it, TaskCategory::kAllGather), 10);
  EXPECT_EQ(tasks_of(it, TaskCategory::kReduceScatter), 8);
  EXPECT_EQ(tasks_of(it, TaskCategory::kAllReduce), 0);
  // Two norms per block whose gradients are partial: 2 x 2 all-reduces of A / 10 more.
  const SimulatedIteration norms = setup.run(2, true, 2);
  EXPECT_NEAR(norms.times.makespan, 22e-3 + 0.4e-3, 1e-12);
  EXPECT_EQ(tasks_of(norms, TaskCategory::kAllReduce), 4);
}

TEST(TensorSystem, AVocabularySplitAddsTheEmbeddingsTheHeadsAndTheLossCollectives) {
  TwoBlocks setup;
  // The blocks' 8 A; the embedding's all-reduce forward and the head's backward (A each); the
  // loss's all-gather and two all-reduces (A/10 each).
  const SimulatedIteration plain = setup.run(2, false, 0, true);
  EXPECT_NEAR(plain.times.makespan, 12e-3 + 8e-3 + 2e-3 + 0.3e-3 + 1e-3, 1e-12);
  EXPECT_EQ(tasks_of(plain, TaskCategory::kAllReduce), 8 + 2 + 2);
  EXPECT_EQ(tasks_of(plain, TaskCategory::kAllGather), 1);
  // Sequence parallelism: the embedding's reduce-scatter and all-gather and the head's
  // all-gather and reduce-scatter (A/2 each) replace the two gathers of the tokens; the last
  // norm's gradient is all-reduced too (A/10).
  const SimulatedIteration sequence = setup.run(2, true, 0, true);
  EXPECT_NEAR(sequence.times.makespan, 12e-3 + 8e-3 + 2e-3 + 0.3e-3 + 0.1e-3 + 1e-3, 1e-12);
  EXPECT_EQ(tasks_of(sequence, TaskCategory::kAllGather), 8 + 2 + 1);
  EXPECT_EQ(tasks_of(sequence, TaskCategory::kReduceScatter), 8 + 2);
  EXPECT_EQ(tasks_of(sequence, TaskCategory::kAllReduce), 2 + 1);
  // A chain whose ends are not an embedding and a linear head has no vocabulary to split.
  setup.costs.names[0] = "DecoderLayer(layers.x)";
  EXPECT_THROW(setup.run(2, false, 0, true), std::invalid_argument);
}

TEST(TensorSystem, GatheringAgainInBackwardAddsTwoAllGathersPerBlock) {
  TwoBlocks setup;
  // Sequence parallelism's 22 ms, and 2 all-gathers (A/2 each) in each of the 2 blocks' backward.
  const SimulatedIteration it = setup.run(2, true, 0, false, true);
  EXPECT_NEAR(it.times.makespan, 22e-3 + 2e-3, 1e-12);
  EXPECT_EQ(tasks_of(it, TaskCategory::kAllGather), 10 + 4);
}

TEST(TensorSystem, AFullyRecomputedBlockRepeatsItsForwardCollectivesInBackward) {
  TwoBlocks setup;
  // Every block: its 2 forward all-reduces again before its backward (2 blocks x 2 A); the
  // recomputed compute is the profile's backward, unchanged here.
  const SimulatedIteration every = setup.run(2, false, 0, false, false, 1);
  EXPECT_NEAR(every.times.makespan, 21e-3 + 4e-3, 1e-12);
  EXPECT_EQ(tasks_of(every, TaskCategory::kAllReduce), 8 + 4);
  // The first of each 2: block 0 only.
  const SimulatedIteration first = setup.run(2, false, 0, false, false, 2);
  EXPECT_NEAR(first.times.makespan, 21e-3 + 2e-3, 1e-12);
  // Sequence parallelism: block 0's 2 all-gathers and 2 reduce-scatters (A/2 each); block 1,
  // the last, also gathers the tokens again (A/2).
  const SimulatedIteration sequence = setup.run(2, true, 0, false, false, 1);
  EXPECT_NEAR(sequence.times.makespan, 22e-3 + 4e-3 + 0.5e-3, 1e-12);
  EXPECT_EQ(tasks_of(sequence, TaskCategory::kAllGather), 10 + 5);
  EXPECT_EQ(tasks_of(sequence, TaskCategory::kReduceScatter), 8 + 4);
}

TEST(TensorSystem, ReplicasSumEachSlicesBucketsAcrossGroups) {
  TwoBlocks setup;
  setup.costs.parameter_bytes = {4e6, 4e6, 4e6, 4e6};
  const SimulatedIteration it = setup.run(4, false);
  // 2 groups of 2: each group's 8 tensor all-reduces, and each slice's buckets over its 2
  // replicas (slice j of groups 0 and 1: ranks j and 2 + j).
  const size_t buckets = layer_buckets(setup.costs, 1, 25).size();
  EXPECT_EQ(tasks_of(it, TaskCategory::kAllReduce), 2 * 8 + 2 * static_cast<int>(buckets));
  for (const Task& task : it.graph.tasks()) {
    if (task.kind != TaskKind::kCollective || task.blocking) continue;
    const std::vector<int>& ranks = it.graph.groups()[task.group];
    EXPECT_EQ(ranks.size(), 2u);
    EXPECT_EQ(ranks[1] - ranks[0], 2);
  }
  // The buckets wait for backward; the all-reduce of the first-layer bucket ends the iteration
  // before the step: it cannot be shorter than one group alone.
  EXPECT_GT(it.times.makespan, 21e-3);
}

TEST(TensorSystem, RefusesAProfileWithoutBlocksAndAnAxisThatDoesNotDivide) {
  TwoBlocks setup;
  EXPECT_THROW(setup.run(3, false), std::invalid_argument);
  setup.costs.names = {"a", "b", "c", "d"};
  try {
    setup.run(2, false);
    FAIL() << "expected a refusal";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "the profile has no transformer block for a tensor axis to split");
  }
}

}  // namespace
}  // namespace harness::simulator

namespace harness::simulator {
namespace {

// FSDP x TP (zero_stage 3) at world 4, tensor 2 x 2 replicas: the decoder's 4 layers each hold
// 20 MB (float32) and their outputs nothing, so that only the replicas' collectives cost: a
// unit's all-gather or reduce-scatter over 2 replicas is one ring step of 10 MB, 1 ms. A group's
// 2 samples make each forward 2 ms and each backward 4 ms. Forward: a unit's gather is queued
// as forward enters the unit before it (0, 1, 3 and 5 ms, ending at 1, 2, 4 and 6), each layer
// behind its own: 1 + 4 x 2 = 9 ms. Backward: the last
// unit gathered again (10), the one before behind it (11); layer 3 10-14, its reduce-scatter
// 14-15; unit 1's gather 15-16; layer 2 14-18, scatter 18-19; unit 0's gather 19-20; layer 1
// 18-22, scatter 22-23; layer 0 22-26, scatter 26-27; half the 1 ms step: 27.5 ms. ZeRO-2 keeps
// the whole parameters: forward 8, each backward's scatter behind it (25), the half step (25.5),
// then the 4 updated shards gathered: 29.5 ms.
TEST(TensorSystem, ShardedReplicasGatherAndScatterTheirSlicesUnits) {
  LayerCosts costs = testing::two_block_decoder();
  costs.parameter_bytes.assign(4, 20e6);
  costs.activation_bytes.assign(4, 0.0);
  ClusterConfig config;
  config.gpus_per_machine = {4};
  config.intra_bandwidth = 10e9;
  config.intra_latency_s = 0;
  ComputeNoise none;
  const auto run = [&](int zero_stage) {
    TensorSystem system;
    system.world = 4;
    system.tensor = 2;
    system.batch_per_group = 2;
    system.step_s = 1e-3;
    system.zero_stage = zero_stage;
    return simulate_tensor_parallel(Cluster(config), costs, system, none);
  };
  const SimulatedIteration fsdp = run(3);
  EXPECT_NEAR(fsdp.times.makespan, 27.5e-3, 1e-12);
  EXPECT_EQ(testing::tasks_of(fsdp, TaskCategory::kAllGather), 2 * 8);  // 2 slices' groups
  EXPECT_EQ(testing::tasks_of(fsdp, TaskCategory::kReduceScatter), 2 * 4);
  std::vector<double> gathers_ms;  // slice 0's group's, on rank 0
  for (size_t t = 0; t < fsdp.graph.tasks().size(); ++t) {
    const Task& task = fsdp.graph.tasks()[t];
    if (task.category == TaskCategory::kAllGather && task.rank == 0)
      gathers_ms.push_back(fsdp.times.start[t] * 1e3);
  }
  ASSERT_GE(gathers_ms.size(), 4u);
  EXPECT_NEAR(gathers_ms[2], 3.0, 1e-9);
  EXPECT_NEAR(gathers_ms[3], 5.0, 1e-9);
  EXPECT_NEAR(run(2).times.makespan, 29.5e-3, 1e-12);
  EXPECT_EQ(testing::tasks_of(run(2), TaskCategory::kAllGather), 2 * 4);
}

}  // namespace
}  // namespace harness::simulator
