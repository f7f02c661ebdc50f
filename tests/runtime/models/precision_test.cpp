// model.precision (issue 22): under bf16 a linear layer computes in bfloat16 while its weights
// and their gradients stay fp32 (master weights), the loss reduces in fp32, and leaving the
// scope restores fp32 computation; fp32 changes nothing.
#include "runtime/models/precision.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "runtime/compat/torch_compat.h"
#include "runtime/device/cuda_support.h"

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
  EXPECT_FALSE(torch_compat::cpu_autocast_enabled());
}

TEST(Precision, Fp32ChangesNothingAndNamesParse) {
  torch::nn::Linear layer(4, 2);
  {
    const PrecisionScope scope(Precision::kFp32);
    EXPECT_EQ(layer->forward(torch::randn({1, 4})).scalar_type(), at::kFloat);
    EXPECT_FALSE(torch_compat::cpu_autocast_enabled());
  }
  EXPECT_EQ(parse_precision("bf16"), Precision::kBf16);
  EXPECT_EQ(parse_precision("tf32"), Precision::kTf32);
  for (const Precision p : {Precision::kFp32, Precision::kTf32, Precision::kBf16}) {
    EXPECT_EQ(parse_precision(to_string(p)), p);
  }
  EXPECT_STREQ(to_string(Precision::kFp32), "fp32");
  try {
    parse_precision("fp8");
    FAIL() << "fp8 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown precision 'fp8' (expected fp32, tf32 or bf16)");
  }
}

// What a rank reports it trained in: bf16 where its forward came out in bfloat16 (under the
// scope), fp32 on a CPU otherwise.
TEST(Precision, TheObservedPrecisionIsWhatTheForwardProduced) {
  torch::nn::Linear layer(4, 2);
  const torch::Tensor x = torch::randn({1, 4});
  {
    const PrecisionScope scope(Precision::kBf16);
    EXPECT_EQ(observed_precision(layer->forward(x).scalar_type(), false), "bf16");
  }
  EXPECT_EQ(observed_precision(layer->forward(x).scalar_type(), false), "fp32");
}

// A CUDA LibTorch (no GPU needed): the GPU math a rank sets is the math it reports, and a bf16
// scope on CUDA tensors turns CUDA's autocast on and back off. A CPU LibTorch has neither.
TEST(Precision, TheGpuMathIsSetAndReadBack) {
  if (!cuda::built_with_cuda()) GTEST_SKIP() << "LibTorch without CUDA";
  const cuda::Fp32Math before = cuda::fp32_math();
  cuda::set_fp32_math({true, true});
  EXPECT_EQ(observed_precision(at::kFloat, true), "tf32");
  cuda::set_fp32_math({false, false});
  EXPECT_EQ(observed_precision(at::kFloat, true), "fp32");
  cuda::set_fp32_math({true, false});
  EXPECT_EQ(observed_precision(at::kFloat, true), "fp32 with TF32 convolutions");
  EXPECT_EQ(observed_precision(at::kBFloat16, true), "bf16");
  // What a rank of each precision sets.
  set_gpu_fp32_math(Precision::kTf32);
  EXPECT_EQ(observed_precision(at::kFloat, true), "tf32");
  set_gpu_fp32_math(Precision::kBf16);
  EXPECT_EQ(observed_precision(at::kFloat, true), "fp32");
  set_gpu_fp32_math(Precision::kTf32);
  set_gpu_fp32_math(Precision::kFp32);
  EXPECT_EQ(observed_precision(at::kFloat, true), "fp32");
  cuda::set_fp32_math(before);
  {
    const PrecisionScope scope(Precision::kBf16, c10::DeviceType::CUDA);
    EXPECT_TRUE(cuda::set_bf16_autocast(true));  // on inside the scope
    EXPECT_FALSE(torch_compat::cpu_autocast_enabled());
  }
  EXPECT_FALSE(cuda::set_bf16_autocast(false));  // off again after it
}

}  // namespace
}  // namespace runtime
