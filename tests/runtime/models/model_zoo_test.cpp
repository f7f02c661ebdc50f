// The zoo's ResNets have exactly torchvision's architecture: parameter tensors, counts and
// names (checked against torchvision's published numbers and state_dict keys).
#include "runtime/models/model_zoo.h"

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

TEST(ModelZoo, BertBaseHasHuggingFaceBertsParametersWithoutTokenTypes) {
  // Hugging Face's bert-base-uncased: 109,482,240 parameters with 512 positions; this encoder
  // has no token-type embeddings (2 x 768) and adds a 2-class classifier (768 x 2 + 2).
  auto model = make_model("bert", {{512}, 2});
  EXPECT_EQ(runtime::parameter_count(*model), 109482240 - 2 * 768 + 768 * 2 + 2);
  const auto named = model->named_parameters();
  EXPECT_TRUE(named.contains("encoder.layer.11.intermediate.weight"));
  EXPECT_EQ(named["embeddings.word_embeddings.weight"].sizes(), (std::vector<int64_t>{30522, 768}));
  const auto& layers = model->layers();
  ASSERT_EQ(layers.size(), 15u);  // embeddings, 12 encoder layers, pooler, classifier
  EXPECT_EQ(layers[1].name, "encoder.layer.0");
  EXPECT_EQ(layers[13].name, "pooler");
  EXPECT_EQ(model->input_vocabulary(), 30522);
}

TEST(ModelZoo, VitBaseHasViTB16sParameters) {
  // ViT-B/16 at 224 x 224 with 1000 classes: 86,567,656 parameters, as timm's
  // vit_base_patch16_224 (the patch convolution's 768 x 3 x 16 x 16 + 768 as a linear layer).
  auto model = make_model("vit", image_options());
  EXPECT_EQ(runtime::parameter_count(*model), 86567656);
  const auto named = model->named_parameters();
  EXPECT_EQ(named["embeddings.positions"].sizes(), (std::vector<int64_t>{1, 197, 768}));
  EXPECT_TRUE(named.contains("encoder.layer.11.intermediate.weight"));
  const auto& layers = model->layers();
  ASSERT_EQ(layers.size(), 14u);  // patch embeddings, 12 encoder layers, head
  EXPECT_EQ(layers[13].name, "head");
  EXPECT_EQ(model->input_vocabulary(), 0);
  // vit_moe: every other feed-forward 4 experts and a router, in place of one feed-forward.
  const int64_t feed_forward = 2 * 768 * 3072 + 3072 + 768;
  EXPECT_EQ(runtime::parameter_count(*make_model("vit_moe", image_options())),
            86567656 + 6 * (3 * feed_forward + 768 * 4));
}

// The patch embedding is the stride-16 convolution of ViT: the same weights as a [hidden, 3, 16,
// 16] kernel give the same tokens, the class token first, positions added to every token.
TEST(ModelZoo, VitPatchesAreTheStride16Convolution) {
  torch::manual_seed(3);
  ModelOptions options = image_options(32);
  options.depth = 1;
  options.width = 64;
  options.num_classes = 10;
  auto model = make_model("vit", options);
  const auto images = torch::randn({2, 3, 32, 32});
  const auto tokens = model->forward_layers(images, 0, 0);  // [2, 1 + 4, 64]
  auto named = model->named_parameters();
  const auto kernel = named["embeddings.projection.weight"].reshape({64, 3, 16, 16});
  const auto convolved = torch::conv2d(images, kernel, named["embeddings.projection.bias"], 16)
                             .flatten(2)
                             .transpose(1, 2);  // [2, 4, 64], row-major patches
  const auto positions = named["embeddings.positions"];
  EXPECT_TRUE(
      torch::allclose(tokens.narrow(1, 1, 4), convolved + positions.narrow(1, 1, 4), 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(
      tokens.select(1, 0),
      (named["embeddings.class_token"] + positions.narrow(1, 0, 1)).squeeze(1).expand({2, 64})));
  EXPECT_EQ(model->forward(images).sizes(), (std::vector<int64_t>{2, 10}));
  EXPECT_THROW(make_model("vit", image_options(40)), std::invalid_argument);  // 40 % 16 != 0
}

TEST(ModelZoo, DepthAndWidthResizeBertVggAndMlp) {
  torch::manual_seed(0);
  auto bert = make_model("bert", {{16}, 3, /*depth=*/2, /*width=*/128});
  EXPECT_EQ(bert->layers().size(), 5u);
  const auto ids = torch::randint(30522, {4, 16}, torch::kLong);
  EXPECT_EQ(bert->forward(ids).sizes(), (std::vector<int64_t>{4, 3}));
  // VGG-19 at width 8: channels 8..64, a 7x7x64 -> 512 -> 512 -> 10 classifier.
  auto vgg = make_model("vgg19", {{3, 32, 32}, 10, 0, /*width=*/8});
  const int64_t convs = 3 * 8 * 9 + 8 + 8 * 8 * 9 + 8 + 8 * 16 * 9 + 16 + 16 * 16 * 9 + 16 +
                        16 * 32 * 9 + 32 + 3 * (32 * 32 * 9 + 32) + 32 * 64 * 9 + 64 +
                        3 * (64 * 64 * 9 + 64) + 4 * (64 * 64 * 9 + 64);
  const int64_t classifier = 64 * 49 * 512 + 512 + 512 * 512 + 512 + 512 * 10 + 10;
  EXPECT_EQ(runtime::parameter_count(*vgg), convs + classifier);
  auto mlp = make_model("mlp", {{16}, 4, /*depth=*/4, /*width=*/32});
  EXPECT_EQ(mlp->layers().size(), 10u);  // flatten, 4 x (linear, relu), linear
  EXPECT_THROW(make_model("resnet18", {{3, 32, 32}, 0, /*depth=*/3}), std::invalid_argument);
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
