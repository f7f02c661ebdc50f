// The profile `harness profile estimate` computes, by hand on a block small enough to count: a
// device of 1e6 FLOP/s and 1e3 bytes/s at full efficiency, so that a layer's milliseconds are
// its FLOPs / 1e3 plus its element-wise bytes; recomputation; the step; and what is refused.
#include "harness/profile/estimated_profile.h"

#include <gtest/gtest.h>

namespace {

using harness::EstimateRequest;

// 1 block of width 8, 2 heads sharing 1 key/value head, feed-forward 16, vocabulary 10,
// 4 tokens, 1 sample (runtime/models/llama_work.h's test counts it: 4608 + 512 FLOPs and
// 1408 bytes a block forward; the head 640 FLOPs and 320 bytes).
EstimateRequest small_request() {
  EstimateRequest r;
  r.dims = {1, 8, 2, 1, 16, 10, 4};
  r.device = {"test", 1e6, 1e3};
  r.matmul_efficiency = 1;
  r.memory_efficiency = 1;
  return r;
}

TEST(EstimatedProfile, LayerTimesByHand) {
  const auto profile = harness::estimate_layer_profile(small_request());
  ASSERT_EQ(profile.layers.size(), 4u);
  EXPECT_EQ(profile.model, "llama");
  EXPECT_EQ(profile.input_shape, std::vector<int64_t>{4});
  EXPECT_EQ(profile.optimizer, "adamw");
  // The embedding moves 2 x 4 x 8 elements of 2 bytes: 128 bytes, 128 ms.
  EXPECT_DOUBLE_EQ(profile.layers[0].forward.median_ms, 128);
  EXPECT_DOUBLE_EQ(profile.layers[1].forward.median_ms, 5.12 + 1408);
  EXPECT_DOUBLE_EQ(profile.layers[1].backward.median_ms, 2 * (5.12 + 1408));
  // The embedding's backward also writes its 10 x 8 table's float32 gradient: 320 bytes.
  EXPECT_DOUBLE_EQ(profile.layers[0].backward.median_ms, 2 * 128 + 320);
  EXPECT_DOUBLE_EQ(profile.layers[3].forward.median_ms, 0.64 + 320);
  EXPECT_EQ(profile.layers[1].activation_bytes, 4 * 8 * 2);  // 16-bit outputs
  EXPECT_EQ(profile.layers[1].parameter_bytes, 592 * 4);     // float32 gradients
  EXPECT_EQ(profile.layers[3].activation_bytes, 4 * 10 * 2);
  // Kept for backward, 16-bit a token: the block's norm inputs and normed copies (4 x 8), q and
  // o (16), k and v (8), the SwiGLU's four 16-wide tensors (64); the norm its input; the head its
  // input and the float32 logits. 4 tokens.
  EXPECT_EQ(profile.layers[0].stored_bytes, 0);
  EXPECT_EQ(profile.layers[1].stored_bytes, 4 * (32 + 16 + 8 + 64) * 2);
  EXPECT_EQ(profile.layers[2].stored_bytes, 4 * 8 * 2);
  EXPECT_EQ(profile.layers[3].stored_bytes, 4 * (8 * 2 + 10 * 4));
  // From a zero-bubble I until its W, the gradients of the weighted operators' outputs: the
  // block's q (8), k and v (4 each), o (8), gate and up (16 each), down (8) and its two norms
  // (8 each); the norm its output's; the head its float32 logits'; the embedding none.
  EXPECT_EQ(profile.layers[0].weight_pending_bytes, 0);
  EXPECT_EQ(profile.layers[1].weight_pending_bytes, 4 * 80 * 2);
  EXPECT_EQ(profile.layers[2].weight_pending_bytes, 4 * 8 * 2);
  EXPECT_EQ(profile.layers[3].weight_pending_bytes, 4 * 10 * 4);
  // AdamW's step: 80 + 592 + 8 + 80 parameters, 32 bytes each.
  EXPECT_DOUBLE_EQ(profile.whole_step.median_ms, 760 * 32);
  EXPECT_DOUBLE_EQ(profile.whole_forward.median_ms, 128 + 5.12 + 1408 + 128 + 0.64 + 320);
}

// Float32 activations move twice the bytes; the products' FLOPs are the same.
TEST(EstimatedProfile, Float32ActivationsMoveTwiceTheBytes) {
  EstimateRequest r = small_request();
  r.element_bytes = 4;
  const auto profile = harness::estimate_layer_profile(r);
  EXPECT_DOUBLE_EQ(profile.layers[1].forward.median_ms, 5.12 + 2 * 1408);
  EXPECT_EQ(profile.layers[1].activation_bytes, 4 * 8 * 4);
  r.element_bytes = 3;
  EXPECT_EQ(harness::estimate_problem(r), "activations are 2 or 4 bytes");
}

TEST(EstimatedProfile, RecomputationAddsToTheBlocksBackward) {
  EstimateRequest full = small_request();
  full.activation_checkpointing = "full";
  const auto recomputed = harness::estimate_layer_profile(full);
  EXPECT_DOUBLE_EQ(recomputed.layers[1].backward.median_ms, 3 * (5.12 + 1408));
  EXPECT_DOUBLE_EQ(recomputed.layers[3].backward.median_ms, 2 * (0.64 + 320));  // the head: not
  EXPECT_EQ(recomputed.activation_checkpointing, "full");
  EXPECT_EQ(recomputed.layers[1].stored_bytes, 4 * 8 * 2);  // the block's input alone
  EstimateRequest selective = small_request();
  selective.activation_checkpointing = "selective";  // the attention core's 512 FLOPs again
  EXPECT_DOUBLE_EQ(harness::estimate_layer_profile(selective).layers[1].backward.median_ms,
                   2 * (5.12 + 1408) + 0.512);
}

TEST(EstimatedProfile, ASliceHoldsItsShareOfTheBlocks) {
  EstimateRequest r = small_request();
  r.dims.kv_heads = 2;
  r.split.tensor = 2;
  const auto slice = harness::estimate_layer_profile(r);
  EXPECT_EQ(slice.tensor, 2);
  // q, k, v, o of 8 x 8 and three 8 x 16 halved; the two norms whole.
  EXPECT_EQ(slice.layers[1].parameter_bytes, ((4 * 64 + 3 * 128) / 2 + 16) * 4);
  EXPECT_EQ(slice.layers[3].parameter_bytes, 80 * 4);  // the head whole
}

TEST(EstimatedProfile, PublishedShapesAndDevices) {
  const runtime::LlamaDimensions* seventy = harness::find_llama_shape("llama2-70b");
  ASSERT_NE(seventy, nullptr);
  EXPECT_EQ(seventy->depth, 80);
  EXPECT_EQ(seventy->kv_heads, 8);
  EXPECT_EQ(seventy->feed_forward, 28672);
  EXPECT_EQ(harness::find_llama_shape("llama3-8b"), nullptr);
  ASSERT_NE(harness::find_device_rates("h100"), nullptr);
  EXPECT_DOUBLE_EQ(harness::find_device_rates("h100")->peak_flops, 989.4e12);
  // Llama-2 7B's parameters: 6.74 billion, as published.
  EstimateRequest r = small_request();
  r.dims = *harness::find_llama_shape("llama2-7b");
  double parameters = 0;
  for (const auto& layer : harness::estimate_layer_profile(r).layers) {
    parameters += double(layer.parameter_bytes) / 4;
  }
  EXPECT_NEAR(parameters / 1e9, 6.74, 0.005);
}

TEST(EstimatedProfile, RefusesWhatCannotBe) {
  EstimateRequest r = small_request();
  r.split.tensor = 2;  // 1 key/value head
  EXPECT_EQ(harness::estimate_problem(r), "kv_heads (1) do not split over a tensor axis of 2");
  r = small_request();
  r.matmul_efficiency = 1.5;
  EXPECT_EQ(harness::estimate_problem(r), "matmul efficiency must be in (0, 1]");
  r = small_request();
  r.split.sequence_parallel = true;  // over one rank
  EXPECT_EQ(harness::estimate_problem(r),
            "sequence and vocabulary parallelism split over a tensor axis of 2 or more");
  r = small_request();
  r.batch = 0;
  EXPECT_EQ(harness::estimate_problem(r), "batch must be at least 1");
  EXPECT_THROW(harness::estimate_layer_profile(r), std::invalid_argument);
}

}  // namespace
