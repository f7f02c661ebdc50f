// A stage profile's parts (`harness profile layers --stages`): handed between processes as
// JSON and merged into one profile of the whole model.
#include <gtest/gtest.h>

#include <stdexcept>

#include "common/json_file.h"
#include "runtime/profile/layer_profile_json.h"

namespace {

using runtime::LayerProfileResult;

runtime::LayerTiming layer(const std::string& name, double forward_ms, double backward_ms) {
  runtime::LayerTiming t;
  t.name = name;
  t.kind = "Linear";
  t.forward = {forward_ms, forward_ms * 0.9, forward_ms * 1.2};
  t.backward = {backward_ms, backward_ms * 0.8, backward_ms * 1.5};
  t.activation_bytes = 4096;
  t.parameter_bytes = 1000;
  return t;
}

// Layers [first, first + names.size()) of a 5-layer model.
LayerProfileResult part(int first, const std::vector<std::string>& names, double forward_ms,
                        double backward_ms, double step_ms, int untimed) {
  LayerProfileResult r;
  r.model = "mlp";
  r.batch = 4;
  r.input_shape = {8};
  r.input_bytes = 128;
  r.repetitions = 5;
  r.threads = 1;
  r.first_layer = first;
  r.chain_layers = 5;
  r.untimed_runs = untimed;
  for (size_t i = 0; i < names.size(); ++i) {
    r.layers.push_back(layer(names[i], 1.0 + first + i, 2.0 * (1 + first + i)));
  }
  r.whole_forward = {forward_ms, forward_ms - 1, forward_ms + 1};
  r.whole_backward = {backward_ms, backward_ms - 2, backward_ms + 2};
  r.whole_step = {step_ms, step_ms / 2, step_ms * 2};
  return r;
}

TEST(StageProfileMerge, LayersInOrderAndWholeTimesSummed) {
  const auto merged = harness::merge_stage_profiles(
      {part(0, {"a", "b"}, 3.0, 7.0, 0.5, 4), part(2, {"c", "d", "e"}, 12.0, 25.0, 1.5, 0)});
  ASSERT_EQ(merged.layers.size(), 5u);
  EXPECT_EQ(merged.layers[0].name, "a");
  EXPECT_EQ(merged.layers[4].name, "e");
  EXPECT_DOUBLE_EQ(merged.layers[3].forward.median_ms, 4.0);  // as stage 1 measured layer 3
  EXPECT_DOUBLE_EQ(merged.layers[3].backward.p90_ms, 12.0);
  EXPECT_EQ(merged.first_layer, 0);
  EXPECT_EQ(merged.untimed_runs, 4);
  EXPECT_DOUBLE_EQ(merged.whole_forward.median_ms, 15.0);
  EXPECT_DOUBLE_EQ(merged.whole_forward.p10_ms, 13.0);
  EXPECT_DOUBLE_EQ(merged.whole_backward.p90_ms, 36.0);
  EXPECT_DOUBLE_EQ(merged.whole_step.median_ms, 2.0);
  EXPECT_DOUBLE_EQ(merged.whole_step.p90_ms, 4.0);
}

TEST(StageProfileMerge, RejectsGapsShortCoverAndOtherModels) {
  const auto a = part(0, {"a", "b"}, 3, 7, 0.5, 0);
  try {
    harness::merge_stage_profiles({a, part(3, {"d", "e"}, 1, 1, 1, 0)});
    FAIL() << "a gap was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "stage 1 starts at layer 3 with 2 layers; expected a range from layer 2");
  }
  try {
    harness::merge_stage_profiles({a, part(2, {"c", "d"}, 1, 1, 1, 0)});
    FAIL() << "a short cover was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "the stages end at layer 3 of the model's 0-4");
  }
  auto other = part(2, {"c", "d", "e"}, 1, 1, 1, 0);
  other.batch = 8;
  EXPECT_THROW(harness::merge_stage_profiles({a, other}), std::invalid_argument);
  EXPECT_THROW(harness::merge_stage_profiles({}), std::invalid_argument);
}

TEST(StageProfileMerge, JsonRoundTripKeepsEveryField) {
  const auto original = part(2, {"c", "d", "e"}, 12.0, 25.0, 1.5, 3);
  const auto back = harness::layer_profile_from_json(
      harness::parse_json(harness::json_text(harness::layer_profile_json(original))));
  EXPECT_EQ(back.model, "mlp");
  EXPECT_EQ(back.batch, 4);
  EXPECT_EQ(back.input_shape, std::vector<int64_t>{8});
  EXPECT_EQ(back.input_bytes, 128);
  EXPECT_EQ(back.first_layer, 2);
  EXPECT_EQ(back.chain_layers, 5);
  EXPECT_EQ(back.untimed_runs, 3);
  ASSERT_EQ(back.layers.size(), 3u);
  EXPECT_EQ(back.layers[1].name, "d");
  EXPECT_DOUBLE_EQ(back.layers[1].backward.p10_ms, original.layers[1].backward.p10_ms);
  EXPECT_EQ(back.layers[1].parameter_bytes, 1000);
  EXPECT_DOUBLE_EQ(back.whole_step.p90_ms, 3.0);
  EXPECT_FALSE(back.layers[1].backward_input.has_value());
  EXPECT_THROW(harness::layer_profile_from_json(nlohmann::json{{"model", "mlp"}}),
               nlohmann::json::exception);
}

// A stage's after-idle timings travel with its part and stay the stage's: the merged whole has
// none of its own (profile.json keeps each under its stage).
TEST(StageProfileMerge, TheSplitBackwardRoundTrips) {
  auto original = part(2, {"c", "d", "e"}, 12.0, 25.0, 1.5, 3);
  original.layers[1].backward_input = runtime::TimingStats{2.0, 1.9, 2.2};
  original.layers[1].backward_weight = runtime::TimingStats{3.0, 2.8, 3.5};
  const auto back = harness::layer_profile_from_json(
      harness::parse_json(harness::json_text(harness::layer_profile_json(original))));
  ASSERT_TRUE(back.layers[1].backward_input && back.layers[1].backward_weight);
  EXPECT_DOUBLE_EQ(back.layers[1].backward_input->p90_ms, 2.2);
  EXPECT_DOUBLE_EQ(back.layers[1].backward_weight->median_ms, 3.0);
  EXPECT_FALSE(back.layers[0].backward_input.has_value());
}

// A layer's mixtures of experts travel with it: the simulator's expert parallelism reads them.
TEST(StageProfileMerge, ALayersMixturesRoundTrip) {
  auto original = part(2, {"c", "d", "e"}, 12.0, 25.0, 1.5, 3);
  original.layers[1].mixtures = runtime::LayerMixtures{1, 4, 8409088, 1048576};
  const auto back = harness::layer_profile_from_json(
      harness::parse_json(harness::json_text(harness::layer_profile_json(original))));
  ASSERT_TRUE(back.layers[1].mixtures);
  EXPECT_EQ(back.layers[1].mixtures->count, 1);
  EXPECT_EQ(back.layers[1].mixtures->experts, 4);
  EXPECT_EQ(back.layers[1].mixtures->expert_parameter_bytes, 8409088);
  EXPECT_EQ(back.layers[1].mixtures->dispatch_bytes, 1048576);
  EXPECT_FALSE(back.layers[0].mixtures);
  EXPECT_THROW(harness::mixtures_from_json(nlohmann::json{{"count", 1}}),
               nlohmann::json::exception);
}

TEST(StageProfileMerge, AfterIdleTimingsRoundTripAndStayWithTheirStage) {
  auto original = part(2, {"c", "d", "e"}, 12.0, 25.0, 1.5, 3);
  EXPECT_FALSE(harness::layer_profile_json(original).contains("after_idle"));
  original.after_idle = {{0, {1.0, 0.9, 1.1}, {2.0, 1.8, 2.2}},
                         {30, {1.6, 1.5, 1.9}, {3.1, 3, 3.3}}};
  const auto back = harness::layer_profile_from_json(
      harness::parse_json(harness::json_text(harness::layer_profile_json(original))));
  ASSERT_EQ(back.after_idle.size(), 2u);
  EXPECT_EQ(back.after_idle[1].gap_ms, 30.0);
  EXPECT_DOUBLE_EQ(back.after_idle[1].forward.median_ms, 1.6);
  EXPECT_DOUBLE_EQ(back.after_idle[1].backward.p90_ms, 3.3);
  EXPECT_DOUBLE_EQ(back.after_idle[0].backward.p10_ms, 1.8);
  auto first = part(0, {"a", "b"}, 3.0, 7.0, 0.5, 0);
  first.after_idle = original.after_idle;
  EXPECT_TRUE(harness::merge_stage_profiles({first, back}).after_idle.empty());
}

}  // namespace
