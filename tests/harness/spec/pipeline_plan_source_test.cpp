// Pipeline stages from a planner plan.json and from `stages: N`: layer names matched to the
// model's chain, GPUs as ranks, and the errors a plan that does not fit the run gives.
#include "harness/spec/pipeline_plan_source.h"

#include <gtest/gtest.h>

#include "common/input_error.h"

namespace {

using harness::PipelineStageSpec;
using nlohmann::json;

const std::vector<std::string> kMlpLayers = {"flatten", "fc1", "relu1", "fc2", "relu2", "fc3"};

json plan_with(json stages, int global_batch = 16) {
  return {{"schema", "harness.plan/1"},
          {"results", {{{"global_batch_size", global_batch}, {"plan", {{"stages", stages}}}}}}};
}

TEST(PlanSource, MapsLayerNamesToChainIndexesAndGpusToRanks) {
  const json plan = plan_with(
      {{{"layers", {"Input0", "Flatten(flatten)", "Linear(fc1)"}}, {"gpus", {0, 1, 2}}},
       {{"layers", {"ReLU(relu1)", "Linear(fc2)", "ReLU(relu2)", "Linear(fc3)"}}, {"gpus", {3}}}});
  const auto stages = harness::stages_from_plan_json(plan, kMlpLayers, 16, 4, "plan.json");
  ASSERT_EQ(stages.size(), 2u);
  EXPECT_EQ(stages[0].first_layer, 0);
  EXPECT_EQ(stages[0].last_layer, 1);
  EXPECT_EQ(stages[0].ranks, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(stages[1].first_layer, 2);
  EXPECT_EQ(stages[1].last_layer, 5);
  EXPECT_EQ(stages[1].ranks, (std::vector<int>{3}));
}

void expect_plan_error(const json& plan, long long batch, long long world,
                       const std::string& message) {
  try {
    harness::stages_from_plan_json(plan, kMlpLayers, batch, world, "p.json");
    FAIL() << "accepted: " << message;
  } catch (const harness::InputError& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

TEST(PlanSource, RejectsPlansThatDoNotFitTheRun) {
  const json two = plan_with(
      {{{"layers", {"Linear(fc1)"}}, {"gpus", {0}}}, {{"layers", {"Linear(fc3)"}}, {"gpus", {5}}}});
  expect_plan_error(two, 32, 8,
                    "p.json: no plan for global batch 32 (model.batch_size x run.world_size); the "
                    "plan has 16");
  expect_plan_error(two, 16, 4, "p.json: the plan uses GPU 5 but the run has 4 ranks");
  expect_plan_error(plan_with({{{"layers", {"Conv2d(conv1)"}}, {"gpus", {0}}}}), 16, 4,
                    "p.json: stage 0 has none of the model's layers (a plan for another model?)");
  expect_plan_error(plan_with({{{"layers", {"Linear(fc1)", "Linear(fc3)"}}, {"gpus", {0}}}}), 16, 4,
                    "p.json: stage 0's layers are not contiguous in the model's chain");
  expect_plan_error({{"schema", "other"}}, 16, 4,
                    "p.json: not a harness.plan/1 document (schema 'other')");
}

TEST(PlanSource, EqualStagesSplitLayersAndRanksInOrder) {
  const auto stages = harness::equal_stages(4, 45, 4);  // VGG-19's chain on 4 ranks
  ASSERT_EQ(stages.size(), 4u);
  EXPECT_EQ(stages[0].first_layer, 0);
  EXPECT_EQ(stages[0].last_layer, 10);  // 45 * 1 / 4 = 11 layers
  EXPECT_EQ(stages[1].first_layer, 11);
  EXPECT_EQ(stages[3].last_layer, 44);
  EXPECT_EQ(stages[2].ranks, (std::vector<int>{2}));
  const auto two = harness::equal_stages(2, 7, 4);
  EXPECT_EQ(two[0].last_layer, 2);
  EXPECT_EQ(two[1].ranks, (std::vector<int>{2, 3}));
  EXPECT_THROW(harness::equal_stages(8, 7, 8), harness::InputError);
}

TEST(PlanSource, BalancedStagesMinimiseTheMostExpensiveStage) {
  // Hand-solved: [5 | 1 1 1 2 | 4] would be 5 / 5 / 4; the best max is 5.
  const std::vector<double> costs = {5, 1, 1, 1, 2, 4};
  const auto three = harness::balanced_stages(3, costs, 3);
  ASSERT_EQ(three.size(), 3u);
  EXPECT_EQ(three[0].last_layer, 0);
  EXPECT_EQ(three[1].first_layer, 1);
  EXPECT_EQ(three[1].last_layer, 4);
  EXPECT_EQ(three[2].first_layer, 5);
  // A cheap first and last layer (BERT's embeddings, pooler): they join their neighbours.
  const auto bert = harness::balanced_stages(2, {0.1, 3, 3, 3, 3, 0.1, 0.1}, 4);
  EXPECT_EQ(bert[0].last_layer, 2);
  EXPECT_EQ(bert[1].first_layer, 3);
  EXPECT_EQ(bert[1].ranks, (std::vector<int>{2, 3}));
}

}  // namespace
