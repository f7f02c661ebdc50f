// Synthetic batches for a model that is not on the CPU: a rank on a GPU builds its model on the
// CPU, moves it, then draws its batch. No GPU here: a model whose one layer lives on the meta
// device (shapes, no data) stands in, and refuses an input from elsewhere as a CUDA kernel does.
#include "runtime/models/synthetic_batch.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <stdexcept>

namespace {

using runtime::make_synthetic_batch;

// Maps a sample's `features` values (token ids as numbers) to `classes` outputs through one
// weight on the meta device.
class MetaLayerImpl : public torch::nn::Module {
 public:
  MetaLayerImpl(int64_t features, int64_t classes) {
    weight_ = register_parameter("weight",
                                 torch::empty({classes, features}, torch::Device(torch::kMeta)));
  }
  torch::Tensor forward(torch::Tensor input) {
    if (input.device() != weight_.device()) {
      throw std::runtime_error("input on " + input.device().str() + ", weight on " +
                               weight_.device().str());
    }
    return input.flatten(1).to(weight_.scalar_type()).matmul(weight_.t());
  }

 private:
  torch::Tensor weight_;
};
TORCH_MODULE(MetaLayer);

// `vocabulary` > 0: it reads token ids.
class MetaModel : public runtime::ZooModel {
 public:
  MetaModel(int64_t features, int64_t classes, int64_t vocabulary) {
    input_vocabulary_ = vocabulary;
    append_layer("layer", "MetaLayer", register_module("layer", MetaLayer(features, classes)));
  }
};

TEST(SyntheticBatch, TheTargetWidthProbeRunsWhereTheModelIs) {
  MetaModel model(16, 3, 0);
  torch::manual_seed(5);
  const auto batch = make_synthetic_batch(model, {{4, 4}, 3}, 6, "mse");
  EXPECT_EQ(batch.input.sizes(), (std::vector<int64_t>{6, 4, 4}));
  EXPECT_EQ(batch.target.sizes(), (std::vector<int64_t>{6, 3}));
  // Drawn on the CPU (the caller places it), the same numbers as for a model on the CPU.
  EXPECT_TRUE(batch.input.device().is_cpu());
  EXPECT_TRUE(batch.target.device().is_cpu());
  auto on_cpu = runtime::make_model("mlp", {{4, 4}, 3});
  torch::manual_seed(5);
  const auto expected = make_synthetic_batch(*on_cpu, {{4, 4}, 3}, 6, "mse");
  EXPECT_TRUE(torch::equal(batch.input, expected.input));
  EXPECT_TRUE(torch::equal(batch.target, expected.target));
}

TEST(SyntheticBatch, TokenIdsReachAModelOffTheCpu) {
  MetaModel model(16, 2, 30);
  const auto batch = make_synthetic_batch(model, {{16}, 2}, 3, "cross_entropy");
  EXPECT_EQ(batch.input.scalar_type(), torch::kLong);
  EXPECT_EQ(batch.input.sizes(), (std::vector<int64_t>{3, 16}));
  EXPECT_EQ(batch.target.sizes(), (std::vector<int64_t>{3}));
  EXPECT_LT(batch.target.max().item<int64_t>(), 2);
}

}  // namespace
