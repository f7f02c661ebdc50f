// The zoo's ResNets have exactly torchvision's architecture: parameter tensors, counts and
// names (checked against torchvision's published numbers and state_dict keys).
#include "runtime/model_zoo.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace {

using runtime::make_model;
using runtime::ModelOptions;

ModelOptions image_options(int64_t side = 224) { return {{3, side, side}, 0}; }

TEST(ModelZoo, ResNet50MatchesTorchvision) {
  auto model = make_model("resnet50", image_options());
  EXPECT_EQ(model->parameters().size(), 161u);
  EXPECT_EQ(runtime::parameter_count(*model), 25557032);
  const auto named = model->named_parameters();
  EXPECT_EQ(named.keys().front(), "conv1.weight");
  EXPECT_EQ(named.keys().back(), "fc.bias");
  EXPECT_TRUE(named.contains("layer1.0.downsample.0.weight"));
  EXPECT_TRUE(named.contains("layer4.2.bn3.bias"));
  // V1.5: the stride-2 convolution of a stage's first block is the 3x3 one.
  EXPECT_EQ(named["layer2.0.conv2.weight"].sizes(), (std::vector<int64_t>{128, 128, 3, 3}));
  // BatchNorm buffers: running mean/var and num_batches_tracked for each of 53 BN layers.
  EXPECT_EQ(model->buffers().size(), 53u * 3);
}

TEST(ModelZoo, ResNet18MatchesTorchvision) {
  auto model = make_model("resnet18", image_options());
  EXPECT_EQ(model->parameters().size(), 62u);
  EXPECT_EQ(runtime::parameter_count(*model), 11689512);
}

TEST(ModelZoo, ForwardShapes) {
  torch::NoGradGuard no_grad;
  auto resnet = make_model("resnet18", {{3, 64, 64}, 7});
  resnet->eval();
  EXPECT_EQ(resnet->forward(torch::randn({2, 3, 64, 64})).sizes(), (std::vector<int64_t>{2, 7}));
  auto mlp = make_model("mlp", {{4, 4}, 3});
  EXPECT_EQ(mlp->forward(torch::randn({5, 4, 4})).sizes(), (std::vector<int64_t>{5, 3}));
  EXPECT_EQ(runtime::parameter_count(*mlp), 16 * 256 + 256 + 256 * 256 + 256 + 256 * 3 + 3);
}

TEST(ModelZoo, SameSeedSameWeights) {
  torch::manual_seed(7);
  auto a = make_model("mlp", {{8}, 2});
  torch::manual_seed(7);
  auto b = make_model("mlp", {{8}, 2});
  for (size_t i = 0; i < a->parameters().size(); ++i) {
    EXPECT_TRUE(torch::equal(a->parameters()[i], b->parameters()[i]));
  }
}

TEST(ModelZoo, UnknownModelThrows) {
  EXPECT_THROW(make_model("alexnet", image_options()), std::invalid_argument);
}

}  // namespace

namespace {

TEST(ModelZoo, Vgg19MatchesTorchvision) {
  auto model = runtime::make_model("vgg19", {{3, 224, 224}, 0});
  EXPECT_EQ(model->parameters().size(), 38u);  // 16 convolutions + 3 linear, weight and bias
  EXPECT_EQ(runtime::parameter_count(*model), 143667240);
  const auto named = model->named_parameters();
  EXPECT_TRUE(named.contains("features.0.weight"));
  EXPECT_TRUE(named.contains("features.34.bias"));  // the last convolution
  EXPECT_TRUE(named.contains("classifier.6.weight"));
}

TEST(ModelZoo, ModelsAreChainsOfNamedLayers) {
  auto resnet = runtime::make_model("resnet50", {{3, 224, 224}, 0});
  std::vector<std::string> names;
  for (const auto& layer : resnet->layers()) names.push_back(layer.name);
  // Stem (4), 16 bottlenecks, pool, fc.
  ASSERT_EQ(names.size(), 22u);
  EXPECT_EQ(names[0], "conv1");
  EXPECT_EQ(names[4], "layer1.0");
  EXPECT_EQ(names[19], "layer4.2");
  EXPECT_EQ(names[21], "fc");
  EXPECT_EQ(resnet->layers()[4].kind, "Bottleneck");
  auto vgg = runtime::make_model("vgg19", {{3, 32, 32}, 10});
  EXPECT_EQ(vgg->layers().size(), 37u + 1 + 7);  // features, avgpool, classifier
  EXPECT_EQ(runtime::make_model("mlp", {{8}, 2})->layers().size(), 6u);
}

}  // namespace
