// The shard layout and the stage formulas, by hand: units of 13 and 5 elements over 4 ranks
// (shards of 4 and 2, padded to 16 and 8), a unit without parameters dropped.
#include "baselines/sharded/shard_layout.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace {

using baselines::ZeroStage;

baselines::ShardLayout four_ranks() {
  return baselines::make_shard_layout({{"a", {10, 3}}, {"relu", {}}, {"b", {5}}}, 4);
}

TEST(ShardLayout, PadsEachUnitToEqualChunks) {
  const auto layout = four_ranks();
  ASSERT_EQ(layout.units.size(), 2u);
  EXPECT_EQ(layout.units[0].name, "a");
  EXPECT_EQ(layout.units[0].elements, 13);
  EXPECT_EQ(layout.units[0].shard_elements, 4);
  EXPECT_EQ(layout.units[0].padded_elements, 16);
  EXPECT_EQ(layout.units[1].shard_elements, 2);
  EXPECT_EQ(layout.units[1].padded_elements, 8);
  EXPECT_EQ(layout.elements(), 18);
  EXPECT_EQ(layout.shard_elements(), 6);
  EXPECT_EQ(layout.padded_elements(), 24);
}

TEST(ShardLayout, MemoryPerStage) {
  const auto layout = four_ranks();
  // fp32 AdamW (two states per element).
  const auto one = baselines::sharded_memory(layout, ZeroStage::kOptimizerState, 4, 2);
  EXPECT_EQ(one.parameter_bytes, 96);  // 24 padded elements
  EXPECT_EQ(one.gradient_bytes, 72);   // 18, as backward made them
  EXPECT_EQ(one.optimizer_state_bytes, 48);
  const auto two = baselines::sharded_memory(layout, ZeroStage::kGradients, 4, 2);
  EXPECT_EQ(two.parameter_bytes, 96);
  EXPECT_EQ(two.gradient_bytes, 24);
  EXPECT_EQ(two.optimizer_state_bytes, 48);
  const auto three = baselines::sharded_memory(layout, ZeroStage::kParameters, 4, 2);
  EXPECT_EQ(three.parameter_bytes, 24);
  EXPECT_EQ(three.gradient_bytes, 24);
  EXPECT_EQ(three.optimizer_state_bytes, 48);
  EXPECT_EQ(baselines::sharded_memory(layout, ZeroStage::kParameters, 4, 0).optimizer_state_bytes,
            0);
}

TEST(ShardLayout, BytesSentPerStage) {
  const auto layout = four_ranks();
  // 96 padded bytes: an all-gather or reduce-scatter of them sends 3/4 of it, 72.
  const auto one = baselines::sharded_traffic(layout, ZeroStage::kOptimizerState, 4);
  EXPECT_DOUBLE_EQ(one.all_reduce_bytes, 108);  // 2 x 3/4 x 72 unpadded bytes
  EXPECT_DOUBLE_EQ(one.all_gather_bytes, 72);
  EXPECT_DOUBLE_EQ(one.reduce_scatter_bytes, 0);
  const auto two = baselines::sharded_traffic(layout, ZeroStage::kGradients, 4);
  EXPECT_DOUBLE_EQ(two.total(), 144);
  const auto three = baselines::sharded_traffic(layout, ZeroStage::kParameters, 4);
  EXPECT_DOUBLE_EQ(three.all_gather_bytes, 144);
  EXPECT_DOUBLE_EQ(three.reduce_scatter_bytes, 72);
  EXPECT_DOUBLE_EQ(three.total(), 216);  // 3 x 3/4 x 96
}

TEST(ShardLayout, OneRankHoldsEverything) {
  const auto layout = baselines::make_shard_layout({{"a", {7}}}, 1);
  EXPECT_EQ(layout.units[0].shard_elements, 7);
  EXPECT_DOUBLE_EQ(baselines::sharded_traffic(layout, ZeroStage::kParameters, 4).total(), 0);
}

TEST(ShardLayout, RefusesBadInput) {
  EXPECT_THROW(baselines::make_shard_layout({{"a", {7}}}, 0), std::invalid_argument);
  EXPECT_THROW(baselines::make_shard_layout({{"a", {-1}}}, 2), std::invalid_argument);
  EXPECT_THROW(baselines::zero_stage_from(4), std::invalid_argument);
  EXPECT_EQ(baselines::stage_number(baselines::zero_stage_from(2)), 2);
}

}  // namespace
