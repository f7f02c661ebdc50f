// Data-parallel estimates and pipeline timing computed by hand for the three-layer profile
// (tests/data/planner/three_layers.txt): per-state compute 0.03/0.06/0.01 s, parameters
// 30e6/60e6/15e6 B, output activations 1e6/2e6/1e6 B, at profile batch 4.
#include <gtest/gtest.h>

#include "planner/search/data_parallel.h"
#include "planner/search/pipeline_search.h"
#include "planner/search/pipeline_timing.h"
#include "planner/search/planner.h"
#include "tests/planner/planner_test_data.h"

namespace harness::planner {
namespace {

struct ThreeLayers : ::testing::Test {
  ModelProfile profile = import_profile(kData + "/three_layers.txt");
  Devices devices{std::vector<int>{2, 4}};
  TrainingSetup setup = [] {
    TrainingSetup s;
    s.profile_batch_size = 4;
    return s;
  }();
};

TEST_F(ThreeLayers, CompatDataParallelEstimates) {
  const CostModel cost(devices, Topology::published_constants(), PlannerMode::kCompat);
  const DataParallelEstimates e = estimate_data_parallel(profile, setup, cost, 16);
  EXPECT_NEAR(e.compute_s, 0.4, 1e-12);        // 0.1 s x 16/4
  EXPECT_NEAR(e.all_reduce_s, 0.0525, 1e-12);  // 105e6 x 2 x 3/4 / 3e9
  EXPECT_EQ(e.max_single_gpu_batch, 15790);    // (16e9 - 2 x 105e6) / (4e6 / 4)
  EXPECT_EQ(e.accumulation_batch, 4);          // 16 / 4 GPUs fits
  EXPECT_NEAR(e.no_overlap, 0.4 / (0.1 + 0.0525), 1e-12);
  // P3 with the index quirk (partial 1/4, half of compute is backward): blocks ready at
  // 0.005/0.035/0.05 s with all-reduces 0.0075/0.03/0.015 s; the first layer's 0.015 s is
  // exposed, then layer 1 gets gap 0.015 + slot 0.005 < 0.03: 0.01 s more.
  EXPECT_NEAR(e.p3, 0.4 / (0.1 + 0.025), 1e-9);
  // Normal overlap: the layer-1 all-reduce (0.03 s) has only 0.015 s of backward to hide in.
  EXPECT_NEAR(e.overlap, 0.4 / (0.1 + 0.03), 1e-9);
}

TEST_F(ThreeLayers, DappleDataParallelUsesHierarchicalAllReduce) {
  const CostModel cost(devices, Topology::published_constants(), PlannerMode::kDapple);
  const DataParallelEstimates e = estimate_data_parallel(profile, setup, cost, 16);
  // 105e6/25e9 in each machine + 105e6 x 2 x 1/2 / 3e9 across the two machines.
  EXPECT_NEAR(e.all_reduce_s, 0.0042 + 0.035, 1e-12);
  EXPECT_NEAR(e.no_overlap, 0.4 / (0.1 + 0.0392), 1e-12);
}

TEST(OverlapModel, IndexQuirkOnlyChangesTheComputeSlots) {
  // Layers forward order: compute 0.4, 0.2, 0.0 (s); all-reduce 0.1 each; whole batch.
  const std::vector<double> compute{0.4, 0.2, 0.0}, reduce{0.1, 0.1, 0.1};
  // Backward blocks: layer 2 ready at 0, layer 1 at 0.1, layer 0 at 0.3; offset starts at the
  // last block's 0.1. Without slots: gap 0.2 hides layer 1's 0.1, gap 0.1 hides layer 2's.
  EXPECT_NEAR(exposed_all_reduce_time(compute, reduce, 1.0, false, false), 0.1, 1e-12);
  // Block-ordered slots only add room: same 0.1. The quirk reads slots by layer index.
  EXPECT_NEAR(exposed_all_reduce_time(compute, reduce, 1.0, true, false), 0.1, 1e-12);
  EXPECT_NEAR(exposed_all_reduce_time(compute, reduce, 1.0, true, true), 0.1, 1e-12);
  // Tight case: all-reduce 0.3 per layer. No slots: block 1 needs 0.2-... worked values.
  const std::vector<double> heavy{0.3, 0.3, 0.3};
  // offset 0.3; i=1: gap 0.2 < 0.3 -> +0.1; i=0: gap 0.1 < 0.3 -> +0.2. Total 0.6.
  EXPECT_NEAR(exposed_all_reduce_time(compute, heavy, 1.0, false, false), 0.6, 1e-12);
  // Block slots (block k = layer 2-k): slot[2]=0.2, slot[1]=0.1 -> gaps 0.4 and 0.2:
  // i=1: excess 0.1; i=0: need 0.1, not < excess 0.1 -> +0.0. Total 0.3.
  EXPECT_NEAR(exposed_all_reduce_time(compute, heavy, 1.0, true, false), 0.3, 1e-12);
  // Quirk slots by layer index: slot[2]=0.0, slot[1]=0.1 -> gaps 0.2 and 0.2: +0.1, +0.1.
  EXPECT_NEAR(exposed_all_reduce_time(compute, heavy, 1.0, true, true), 0.5, 1e-12);
}

TEST(GradientAccumulation, StepsDivideThePerGpuBatch) {
  EXPECT_EQ(gradient_accumulation_batch(1024, 16, 212), 64);  // fits
  EXPECT_EQ(gradient_accumulation_batch(1024, 16, 30), 16);   // 64: 3 steps do not divide, 4 do
  EXPECT_EQ(gradient_accumulation_batch(112, 16, 3),
            1);  // 7 over 3: 3 and 4 steps fail to divide, stop at 4
}

TEST_F(ThreeLayers, StraightTwoStagePlanAndItsLatency) {
  const CostModel cost(devices, Topology::published_constants(), PlannerMode::kCompat);
  SearchRequest request;
  request.units = 2;
  request.gpus_per_unit = 2;
  request.straight = true;
  const auto plan = search_pipeline(profile, cost, request);
  ASSERT_TRUE(plan);
  // Split after state 0: max(0.03/2, 0.07/2, transfer 2e6/2*2/1e9) = 0.035 beats
  // split after state 1: max(0.09/2, 0.01/2, 0.004) = 0.045.
  EXPECT_EQ(describe_stages(*plan), "[0..0]x2 [1..2]x2");
  EXPECT_EQ(plan->stages[0].gpus.ids, (std::vector<int>{0, 1}));
  EXPECT_EQ(plan->stages[1].gpus.ids, (std::vector<int>{2, 3}));
  EXPECT_NEAR(plan->bottleneck_s, 0.035, 1e-12);

  // gbs 16: M = 16/2/4 = 2, block 0.14/2; length 0.07 + 0.4/2/2 + 0.001 = 0.171; stage 0's
  // all-reduce covers 90e6 B (off by one: includes state 1): 90e6/25e9 = 0.0036.
  const PipelineTiming t = time_pipeline(shape_of(profile, cost, *plan), 0.1, 16, setup, 16e9);
  EXPECT_EQ(t.micro_batches, 2);
  EXPECT_NEAR(t.iteration_s, 0.171 + 0.0036, 1e-12);
  EXPECT_NEAR(t.speedup, 0.4 / 0.1746, 1e-9);
  EXPECT_EQ(t.stages[0].in_flight, 2);
  EXPECT_EQ(t.stages[1].in_flight, 1);
  // Stage 0 memory: 30e6 x 2 + 2 micro-batches x 1e6 B. It has one unit, so each of its two
  // GPUs (one per pipeline copy) runs whole micro-batches of the profile batch size.
  EXPECT_NEAR(t.stages[0].memory_bytes, 60e6 + 2e6, 1e-3);

  // dapple charges stage 0 only its own 30e6 B: 30e6/25e9 = 0.0012.
  const CostModel fixed(devices, Topology::published_constants(), PlannerMode::kDapple);
  const PipelineTiming d = time_pipeline(shape_of(profile, fixed, *plan), 0.1, 16, setup, 16e9);
  EXPECT_NEAR(d.speedup, 0.4 / (0.171 + 0.0012), 1e-9);
}

TEST_F(ThreeLayers, SearchKeepsOneStageWhenNothingBeatsIt) {
  // Any split has a stage at or above the average load C / GPUs, so the bottleneck search
  // keeps the single stage on all units (the published planner behaves the same).
  const CostModel cost(devices, Topology::published_constants(), PlannerMode::kCompat);
  SearchRequest request;
  request.units = 4;
  request.gpus_per_unit = 1;
  const auto plan = search_pipeline(profile, cost, request);
  ASSERT_TRUE(plan);
  EXPECT_EQ(describe_stages(*plan), "[0..2]x4");
  EXPECT_NEAR(plan->bottleneck_s, 0.1 / 4, 1e-12);
  request.straight = true;  // four one-GPU stages on three states: impossible
  EXPECT_FALSE(search_pipeline(profile, cost, request));
}

TEST_F(ThreeLayers, DappleMemoryCheckRejectsStagesThatDoNotFit) {
  const CostModel cost(devices, Topology::published_constants(), PlannerMode::kDapple);
  SearchRequest request;
  request.units = 2;
  request.gpus_per_unit = 2;
  // 200 MB GPUs: one stage needs 210e6 B of parameter state. Split after state 0: 60e6 + 2
  // micro-batches x 1e6 B, then 150e6 + 3e6 B -- fits, bottleneck 0.035 s as without memory.
  request.memory = StageMemoryLimit{200e6, 2.0, 1.0, 2};
  auto plan = search_pipeline(profile, cost, request);
  ASSERT_TRUE(plan);
  EXPECT_EQ(describe_stages(*plan), "[0..0]x2 [1..2]x2");
  EXPECT_NEAR(plan->bottleneck_s, 0.035, 1e-12);
  // 150 MB: states 1..2 need 153e6 B, states 0..1 need 186e6 B: nothing fits.
  request.memory->gpu_memory_bytes = 150e6;
  EXPECT_FALSE(search_pipeline(profile, cost, request));
  // Without the check (compat) the single stage wins.
  request.memory.reset();
  plan = search_pipeline(profile, cost, request);
  ASSERT_TRUE(plan);
  EXPECT_EQ(describe_stages(*plan), "[0..2]x4");
}

}  // namespace
}  // namespace harness::planner
