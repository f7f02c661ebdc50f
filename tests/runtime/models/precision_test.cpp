// model.precision (issue 22): under bf16 a linear layer computes in bfloat16 while its weights
// and their gradients stay fp32 (master weights), the loss reduces in fp32, and leaving the
// scope restores fp32 computation; fp32 changes nothing.
#include "runtime/models/precision.h"

#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

namespace runtime {
namespace {

TEST(Precision, Bf16ComputesInBfloat16WithFp32MasterWeights) {
  torch::manual_seed(0);
  torch::nn::Linear layer(8, 4);
  const torch::Tensor x = torch::randn({3, 8});
  torch::Tensor output, loss;
  {
    const PrecisionScope scope(Precision::kBf16);
    output = layer->forward(x);
    loss = torch::mse_loss(output, torch::zeros({3, 4}));
  }
  EXPECT_EQ(output.scalar_type(), at::kBFloat16);
  EXPECT_EQ(loss.scalar_type(), at::kFloat);  // mse_loss autocasts to fp32
  loss.backward();
  EXPECT_EQ(layer->weight.scalar_type(), at::kFloat);
  EXPECT_EQ(layer->weight.grad().scalar_type(), at::kFloat);
  // The bf16 output is the fp32 one rounded: close, not equal.
  const torch::Tensor exact = layer->forward(x);
  EXPECT_EQ(exact.scalar_type(), at::kFloat);
  EXPECT_TRUE(torch::allclose(output.to(at::kFloat), exact, 2e-2, 2e-2));
  EXPECT_FALSE(torch::equal(output.to(at::kFloat), exact));
  EXPECT_FALSE(at::autocast::is_cpu_enabled());
}

TEST(Precision, Fp32ChangesNothingAndNamesParse) {
  torch::nn::Linear layer(4, 2);
  {
    const PrecisionScope scope(Precision::kFp32);
    EXPECT_EQ(layer->forward(torch::randn({1, 4})).scalar_type(), at::kFloat);
    EXPECT_FALSE(at::autocast::is_cpu_enabled());
  }
  EXPECT_EQ(parse_precision("bf16"), Precision::kBf16);
  EXPECT_STREQ(to_string(Precision::kFp32), "fp32");
  try {
    parse_precision("fp8");
    FAIL() << "fp8 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown precision 'fp8' (expected fp32 or bf16)");
  }
}

}  // namespace
}  // namespace runtime
