// The shape-only count of a decoder's work (runtime/models/llama_work.h) against the zoo's model:
// per chain layer, the FLOP counter's forward FLOPs and the parameters the layer holds, whole
// and as slice 0 of a tensor axis of 2 and 4 (and with the vocabulary split), grouped-query heads
// included; and what a block keeps for backward against the allocator.
#include "runtime/models/llama_work.h"

#include <c10/util/ThreadLocalDebugInfo.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "runtime/device/allocation_tracker.h"
#include "runtime/models/flop_count.h"
#include "runtime/models/llama.h"
#include "runtime/parallel/peerless_group.h"
#include "runtime/parallel/tensor_region.h"

namespace llama_work_test {

constexpr int64_t kBatch = 2, kTokens = 16, kWidth = 128, kHeads = 8, kKvHeads = 4;
constexpr int64_t kVocab = 500;

int64_t layer_parameters(const runtime::Layer& layer) {
  int64_t count = 0;
  for (const auto& p : layer.module.ptr()->parameters()) count += p.numel();
  return count;
}

// Slice 0 of the zoo's 3-block decoder split as `split` says, its collectives answered by a
// peerless group kept beside it.
struct ZooSlice {
  std::shared_ptr<runtime::ZooModel> model;
  std::unique_ptr<runtime::PeerlessGroup> group;
};
ZooSlice zoo_slice(const runtime::LlamaSplit& split, int64_t kv_heads) {
  runtime::ModelOptions options;
  options.input_shape = {kTokens};
  options.depth = 3;
  options.width = kWidth;
  options.decoder = {kHeads, kv_heads, kVocab};
  options.tensor_shards = split.tensor;
  options.sequence_parallel = split.sequence_parallel;
  options.vocabulary_parallel = split.vocabulary_parallel;
  ZooSlice slice{runtime::make_model("llama", options),
                 std::make_unique<runtime::PeerlessGroup>(0, static_cast<int>(split.tensor))};
  if (runtime::TensorRegion* region = slice.model->tensor_region()) {
    region->group = slice.group.get();
  }
  return slice;
}

void expect_zoo_counts(int64_t tensor, bool vocabulary_parallel = false) {
  const ZooSlice slice = zoo_slice({tensor, false, vocabulary_parallel}, kKvHeads);
  runtime::ZooModel* model = slice.model.get();
  const torch::Tensor input = torch::randint(kVocab, {kBatch, kTokens}, torch::kLong);
  const std::vector<double> counted = runtime::layer_forward_flops(*model, input);

  const runtime::LlamaDimensions dims{
      3, kWidth, kHeads, kKvHeads, runtime::llama_feed_forward_width(kWidth), kVocab, kTokens};
  const auto work = runtime::llama_layer_work(dims, kBatch, {tensor, false, vocabulary_parallel});
  ASSERT_EQ(work.size(), model->layers().size());
  ASSERT_EQ(work.size(), counted.size());
  for (size_t i = 0; i < work.size(); ++i) {
    const runtime::Layer& layer = model->layers()[i];
    SCOPED_TRACE(layer.name + " at tensor " + std::to_string(tensor) +
                 (vocabulary_parallel ? ", the vocabulary split" : ""));
    EXPECT_EQ(work[i].name, layer.name);
    EXPECT_EQ(work[i].kind, layer.kind);
    EXPECT_DOUBLE_EQ(work[i].forward_flops, counted[i]);
    EXPECT_EQ(work[i].parameters, layer_parameters(layer));
  }
}

TEST(LlamaWork, EveryLayerIsTheZoosModelWholeAndSplit) {
  expect_zoo_counts(1);
  expect_zoo_counts(2);
  expect_zoo_counts(4);
  expect_zoo_counts(2, /*vocabulary_parallel=*/true);
}

// Bytes the middle of three zoo blocks leaves allocated by its forward (float32), its input the
// first block's output: what it keeps for backward, and its output (the next block's input,
// which the count holds as this block's).
double bytes_held_by_llama_block(int64_t tensor, bool sequence_parallel) {
  const ZooSlice slice = zoo_slice({tensor, sequence_parallel, false}, kHeads);
  runtime::ZooModel* model = slice.model.get();
  const torch::Tensor tokens = torch::randint(kVocab, {kBatch, kTokens}, torch::kLong);
  const torch::Tensor input = model->forward_layers(tokens, 0, 1);
  auto tracker = std::make_shared<runtime::AllocationTracker>(c10::DeviceType::CPU);
  torch::Tensor output;
  {
    const c10::DebugInfoGuard track(c10::DebugInfoKind::PROFILER_STATE, tracker);
    output = model->forward_layers(input, 2, 2);
  }
  EXPECT_TRUE(output.requires_grad());
  return static_cast<double>(tracker->current());
}

// What the zoo's unfused RMSNorm keeps beyond its output over `rows` tokens: its normalised input
// before the scale and its mean squares, and with LibTorch 1.13 its input's square too (2.x's
// pow keeps only its input). Measured alone, as the block measures.
double unfused_norm_bytes(int64_t rows) {
  const torch::Tensor x = torch::randn({rows, kWidth}, torch::requires_grad());
  const torch::Tensor scale = torch::ones({kWidth}, torch::requires_grad());
  auto tracker = std::make_shared<runtime::AllocationTracker>(c10::DeviceType::CPU);
  torch::Tensor normed;
  {
    const c10::DebugInfoGuard track(c10::DebugInfoKind::PROFILER_STATE, tracker);
    normed = runtime::rms_norm(x, scale);
  }
  return static_cast<double>(tracker->current() - normed.numel() * 4);
}

// The count is a fused implementation's (RMSNorm keeping its input, the attention core no
// scores); the zoo's unfused ones keep more: each RMSNorm what it keeps alone (above, on the
// norm's share of the tokens), the attention its probabilities (a/t s^2 floats a sample) and
// its causal mask (s^2 bools). In float32, twice the count's 16-bit bytes. To the byte.
void expect_stored_as_counted(int64_t tensor, bool sequence_parallel) {
  SCOPED_TRACE("tensor " + std::to_string(tensor) + (sequence_parallel ? " with SP" : ""));
  const runtime::LlamaDimensions dims{
      3, kWidth, kHeads, kHeads, runtime::llama_feed_forward_width(kWidth), kVocab, kTokens};
  const auto work = runtime::llama_layer_work(dims, kBatch, {tensor, sequence_parallel, false});
  const int64_t rows = kBatch * kTokens / (sequence_parallel ? tensor : 1);
  const double unfused = 2 * unfused_norm_bytes(rows) +
                         double(kBatch * kHeads / tensor * kTokens * kTokens) * 4 +
                         double(kTokens * kTokens);
  EXPECT_DOUBLE_EQ(bytes_held_by_llama_block(tensor, sequence_parallel),
                   2 * work[2].stored_bytes + unfused);
}

TEST(LlamaWork, WhatABlockKeepsIsTheAllocatorsLessTheUnfusedTerms) {
  expect_stored_as_counted(1, false);
  expect_stored_as_counted(2, false);
  expect_stored_as_counted(2, true);
}

// By hand for one block of width 8, 2 heads of 4 sharing 1 key/value head, feed-forward 16,
// 4 tokens, 1 sample, whole: projections 2 x 4 x 8 x (16 + 8 + 48) = 4608, attention
// 4 x 16 x 8 = 512; bytes 2 x 4 tokens x (norms and adds 10 x 8, rotary 2 x 12, attention
// 16 + 8, SwiGLU 48) = 1408.
TEST(LlamaWork, ABlockByHand) {
  const runtime::LlamaDimensions dims{1, 8, 2, 1, 16, 10, 4};
  const auto work = runtime::llama_layer_work(dims, 1, {});
  ASSERT_EQ(work.size(), 4u);
  EXPECT_DOUBLE_EQ(work[1].attention_flops, 512);
  EXPECT_DOUBLE_EQ(work[1].forward_flops, 4608 + 512);
  EXPECT_DOUBLE_EQ(work[1].forward_bytes, 1408);
  EXPECT_EQ(work[1].parameters, 2 * 64 + 2 * 32 + 3 * 128 + 16);
  EXPECT_DOUBLE_EQ(work[3].forward_flops, 2 * 4 * 8 * 10);  // the head
  EXPECT_DOUBLE_EQ(work[3].forward_bytes, 4 * 2 * 10 * 4);  // float32 logits in and out
  EXPECT_EQ(work[3].output_elements, 40);
  // Over 2 ranks with sequence parallelism, each of 2 key/value heads: the norms and adds on
  // 2 of the 4 tokens, (40 + (32 + 32 + 48) / 2) x 4 x 2 = 768 bytes; the final norm's 64.
  const runtime::LlamaDimensions two_kv{1, 8, 2, 2, 16, 10, 4};
  const auto sharded = runtime::llama_layer_work(two_kv, 1, {2, true, true});
  EXPECT_DOUBLE_EQ(sharded[1].forward_bytes, 768);
  EXPECT_DOUBLE_EQ(sharded[2].forward_bytes, 64);
  EXPECT_DOUBLE_EQ(sharded[3].forward_flops, 2 * 4 * 8 * 5);  // 5 of the 10 vocabulary rows
  EXPECT_EQ(sharded[0].parameters, 40);
  // Kept: the norms' inputs on 2 tokens of 4 (2 x 8 / 2), their gathered normed copies (2 x 8),
  // q, o, k, v (32) and the SwiGLU's four (64) halved: 72 a token, 576 bytes; recomputing, the
  // block's input shard, 4 x 4 x 2 = 32.
  EXPECT_DOUBLE_EQ(sharded[1].stored_bytes, 576);
  EXPECT_DOUBLE_EQ(sharded[1].recomputed_bytes, 32);
}

TEST(LlamaWork, RefusesWhatDoesNotSplit) {
  const runtime::LlamaDimensions dims{2, 64, 4, 2, 171, 100, 8};
  EXPECT_EQ(runtime::llama_work_problem(dims, 2),
            "feed_forward (171) do not split over a tensor axis of 2");
  EXPECT_EQ(runtime::llama_work_problem(dims, 4),
            "kv_heads (2) do not split over a tensor axis of 4");
  EXPECT_EQ(runtime::llama_work_problem({2, 64, 3, 1, 128, 100, 8}, 1),
            "the heads do not divide the width");
  EXPECT_THROW(runtime::llama_layer_work({0, 64, 4, 2, 128, 100, 8}, 1, {}), std::invalid_argument);
  EXPECT_THROW(runtime::llama_layer_work({2, 64, 4, 2, 128, 99, 8}, 1, {2, false, true}),
               std::invalid_argument);  // 99 rows over 2
}

}  // namespace llama_work_test
