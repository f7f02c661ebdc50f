// Expert parallelism in the simulator, by hand: 3 layers (forward 5 ms, backward 10 ms at
// profile batch 1) of 10 MB parameters each, the middle one a mixture of 4 experts holding 20 MB
// more that dispatches 4 MB of token rows, on 2 ranks of one machine at 10 GB/s with no latency,
// a 1 ms step over the whole model's 50 MB. An all-to-all of S over 2 ranks is one step of S/2
// each way: the dispatch's 0.2 ms; the rows-per-expert counts' 32 bytes cost nothing to speak of.
#include "simulator/expert_system.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "simulator/rank_memory.h"
#include "tests/simulator/test_costs.h"

namespace harness::simulator {
namespace {

using testing::tasks_of;

struct OneMixture {
  LayerCosts costs = [] {
    LayerCosts c = testing::chain(3, 5e-3, 10e-3, 0, 10e6);
    c.parameter_bytes[1] = 30e6;
    add_mixtures(c, {{}, {1, 4, 20'000'000, 4'000'000}, {}});
    return c;
  }();
  ComputeNoise none;
  ClusterConfig config = testing::one_machine_at_10_gbps(2);

  SimulatedIteration run(int zero_stage, double batch = 1, bool overlap = true) {
    ExpertSystem system;
    system.world = 2;
    system.batch_per_rank = batch;
    system.zero_stage = zero_stage;
    system.overlap = overlap;
    system.step_s = 1e-3;
    return simulate_expert_parallel(Cluster(config), costs, system, none);
  }
};

TEST(ExpertSystem, TheDensePartLeavesTheExpertsOut) {
  const OneMixture setup;
  EXPECT_EQ(dense_part(setup.costs).parameter_bytes, (std::vector<double>{10e6, 10e6, 10e6}));
  const MixtureExchange exchange = mixture_exchange(setup.costs, 1, 2);
  EXPECT_EQ(exchange.mixtures, 1);
  EXPECT_DOUBLE_EQ(exchange.count_bytes, 32);
  EXPECT_DOUBLE_EQ(exchange.dispatch_bytes, 8e6);  // twice the profile batch's rows
  EXPECT_EQ(mixture_exchange(setup.costs, 0, 2).mixtures, 0);
}

// Forward 15 ms and the mixture's three exchanges (0.4 ms); backward from 15.4 ms: layer 2 until
// 25.4, its 10 MB bucket all-reduced beside layer 1 (2 steps of 5 MB: 1 ms); layer 1 until 35.4
// and its two exchanges until 35.8; layer 0 until 45.8, then the last bucket (layer 1's dense
// 10 MB and layer 0's: 2 ms); the step over the dense 30 MB and 10 MB of experts, 40 of 50 MB of
// the model (0.8 ms).
TEST(ExpertSystem, ExchangesTokensInEachMixtureAndSumsOnlyTheDensePart) {
  OneMixture setup;
  const SimulatedIteration it = setup.run(0);
  EXPECT_NEAR(it.times.makespan, 48.6e-3, 1e-8);
  EXPECT_EQ(tasks_of(it, TaskCategory::kAllToAll), 5);  // counts, dispatch, combine; 2 back
  EXPECT_EQ(tasks_of(it, TaskCategory::kAllReduce), 2);
  EXPECT_NEAR(it.ranks[0].step_ms, 0.8, 1e-9);
  // Twice the batch: twice the compute and the rows.
  EXPECT_NEAR(setup.run(0, 2).times.makespan, 2 * 45e-3 + 4 * 0.4e-3 + 2e-3 + 0.8e-3, 1e-8);
  // DDP's sync mode: both buckets after backward (45.8 ms), 1 + 2 ms, then the step.
  EXPECT_NEAR(setup.run(0, 1, false).times.makespan, 45.8e-3 + 3e-3 + 0.8e-3, 1e-8);
}

// The dense part sharded: ZeRO-1 keeps the buckets (47.8 ms), steps 15 MB of it and the 10 MB of
// experts (0.5 ms) and gathers the 30 MB (one step of 15 MB: 1.5 ms); ZeRO-2 and 3 reduce-scatter
// it after backward (45.8 + 1.5 ms) before that step and gather.
TEST(ExpertSystem, ShardedDensePartsScatterStepAChunkAndGather) {
  OneMixture setup;
  const SimulatedIteration zero1 = setup.run(1);
  EXPECT_NEAR(zero1.times.makespan, 47.8e-3 + 0.5e-3 + 1.5e-3, 1e-8);
  EXPECT_EQ(tasks_of(zero1, TaskCategory::kAllGather), 1);
  EXPECT_EQ(tasks_of(zero1, TaskCategory::kReduceScatter), 0);
  for (int stage : {2, 3}) {
    const SimulatedIteration it = setup.run(stage);
    EXPECT_NEAR(it.times.makespan, 45.8e-3 + 1.5e-3 + 0.5e-3 + 1.5e-3, 1e-8) << stage;
    EXPECT_EQ(tasks_of(it, TaskCategory::kReduceScatter), 1);
    EXPECT_EQ(tasks_of(it, TaskCategory::kAllReduce), 0);
    EXPECT_NEAR(it.ranks[1].step_ms, 0.5, 1e-9);
  }
}

// A rank holds the dense part (its states sharded by the stage) and half the experts whole.
TEST(ExpertSystem, ARankHoldsTheDensePartAndItsShareOfTheExperts) {
  const OneMixture setup;
  const RankMemory whole = expert_parallel_memory(setup.costs, 1, 2, 0);
  EXPECT_DOUBLE_EQ(whole.parameter_bytes, 40e6);
  EXPECT_DOUBLE_EQ(whole.gradient_bytes, 40e6);
  EXPECT_DOUBLE_EQ(whole.optimizer_state_bytes, 80e6);  // AdamW's two moments
  const RankMemory fsdp = expert_parallel_memory(setup.costs, 1, 2, 3);
  EXPECT_DOUBLE_EQ(fsdp.parameter_bytes, 25e6);
  EXPECT_DOUBLE_EQ(fsdp.gradient_bytes, 25e6);
  EXPECT_DOUBLE_EQ(fsdp.optimizer_state_bytes, 50e6);
}

TEST(ExpertSystem, RefusesAProfileWithoutMixtures) {
  OneMixture setup;
  setup.costs.mixtures.clear();
  try {
    setup.run(0);
    FAIL() << "a dense profile was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "the profile has no mixture of experts for expert parallelism to shard");
  }
  EXPECT_THROW(add_mixtures(setup.costs, {{}, {1, 4, 40'000'000, 0}, {}}), std::invalid_argument);
  EXPECT_THROW(add_mixtures(setup.costs, {{}, {}}), std::invalid_argument);
}

}  // namespace
}  // namespace harness::simulator
