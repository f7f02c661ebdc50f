// Model FLOPs from the ops LibTorch runs: hand counts for single layers, no double counting of
// a convolution's inner products, and ResNet-50's published forward count.
#include "runtime/models/flop_count.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace {

TEST(FlopCount, LinearIsTwiceInTimesOutPerSample) {
  torch::nn::Linear linear(64, 32);
  // addmm(bias, x[5,64], w^T[64,32]): 2 x 5 x 64 x 32.
  EXPECT_DOUBLE_EQ(runtime::count_flops([&] { linear(torch::rand({5, 64})); }), 2.0 * 5 * 64 * 32);
  torch::nn::Linear no_bias(torch::nn::LinearOptions(64, 32).bias(false));
  EXPECT_DOUBLE_EQ(runtime::count_flops([&] { no_bias(torch::rand({5, 64})); }), 2.0 * 5 * 64 * 32);
}

TEST(FlopCount, ConvolutionCountsOutputsTimesKernelOnce) {
  // 3 -> 8 channels, 3x3, padding 1 on 8x8: 8x8 outputs per channel, 3 x 9 products each.
  torch::nn::Conv2d same(torch::nn::Conv2dOptions(3, 8, 3).padding(1));
  EXPECT_DOUBLE_EQ(runtime::count_flops([&] {
                     same(torch::rand({2, 3, 8, 8}));
                   }),
                   2.0 * 2 * 8 * (8 * 8) * (3 * 3 * 3));
  // Stride 2, no padding, 2 groups: 16 -> 6 channels on 9x9 gives 4x4; 8 inputs per group.
  torch::nn::Conv2d strided(torch::nn::Conv2dOptions(16, 6, 3).stride(2).groups(2));
  EXPECT_DOUBLE_EQ(runtime::count_flops([&] {
                     strided(torch::rand({1, 16, 9, 9}));
                   }),
                   2.0 * 1 * 6 * (4 * 4) * (8 * 3 * 3));
}

TEST(FlopCount, BatchedProductsAndNothingElse) {
  const auto a = torch::rand({4, 5, 6}), b = torch::rand({4, 6, 7});
  EXPECT_DOUBLE_EQ(runtime::count_flops([&] { torch::bmm(a, b); }), 2.0 * 4 * 5 * 6 * 7);
  EXPECT_DOUBLE_EQ(runtime::count_flops([&] { torch::relu(a) + a * 2; }), 0.0);
}

TEST(FlopCount, ResNet50ForwardMatchesThePublishedCount) {
  // torchvision's ResNet-50 at 224x224: 4.09 G multiply-accumulates per image (convolutions
  // and the classifier), i.e. ~8.18 GFLOPs.
  auto model = runtime::make_model("resnet50", {{3, 224, 224}, 0, 0, 0});
  model->eval();
  const auto flops = runtime::layer_forward_flops(*model, torch::rand({1, 3, 224, 224}));
  double total = 0;
  for (double f : flops) total += f;
  EXPECT_NEAR(total / 1e9, 8.18, 0.08) << total;
  EXPECT_EQ(flops.size(), model->layers().size());
  EXPECT_DOUBLE_EQ(flops.back(), 2.0 * 2048 * 1000);  // fc
}

TEST(FlopCount, BertEncoderLayerByHand) {
  // One encoder layer, 32 tokens of width 256 (FFN 1024): Q, K, V and output projections
  // 4 x 2 x 32 x 256^2, scores and weighted values 2 x 2 x 32^2 x 256, FFN 2 x 2 x 32 x 256 x
  // 1024: 51,380,224 FLOPs per sample; the pooler 2 x 256^2, the classifier 2 x 256 x 2.
  auto model = runtime::make_model("bert", {{32}, 0, 4, 256});
  model->eval();
  const auto input = torch::randint(0, model->input_vocabulary(), {1, 32}, torch::kLong);
  const auto flops = runtime::layer_forward_flops(*model, input);
  ASSERT_EQ(flops.size(), 7u);
  const double layer =
      4 * 2.0 * 32 * 256 * 256 + 2 * 2.0 * 32 * 32 * 256 + 2 * 2.0 * 32 * 256 * 1024;
  EXPECT_DOUBLE_EQ(layer, 51380224.0);
  EXPECT_DOUBLE_EQ(flops[0], 0.0);  // embeddings: lookups
  for (int i = 1; i <= 4; ++i) EXPECT_DOUBLE_EQ(flops[i], layer) << i;
  EXPECT_DOUBLE_EQ(flops[5], 2.0 * 256 * 256);
  EXPECT_DOUBLE_EQ(flops[6], 2.0 * 256 * 2);
}

}  // namespace
