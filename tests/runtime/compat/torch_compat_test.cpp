// The CPU autocast calls that differ between LibTorch 1.13 and 2.4+ (runtime/compat): the switch
// reads back what was set, and while it is on a matmul comes out in the dtype set.
#include "runtime/compat/torch_compat.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

namespace runtime {
namespace {

TEST(TorchCompat, CpuAutocastCastsToTheDtypeSetUntilSwitchedOff) {
  const torch::Tensor a = torch::randn({4, 4}), b = torch::randn({4, 4});
  ASSERT_FALSE(torch_compat::cpu_autocast_enabled());
  torch_compat::set_cpu_autocast_enabled(true);
  EXPECT_TRUE(torch_compat::cpu_autocast_enabled());
  // bf16 is the default: fp32 first, so that a setter that did nothing shows -- as a matmul in
  // fp32, or where the LibTorch casts the CPU to bf16 only (1.13), as its refusal.
  bool refused = false;
  try {
    torch_compat::set_cpu_autocast_dtype(at::kFloat);
  } catch (const c10::Error& error) {
    EXPECT_NE(std::string(error.what()).find("only support Bfloat16"), std::string::npos)
        << error.what();
    refused = true;
  }
  if (!refused) {
    EXPECT_EQ(torch::mm(a, b).scalar_type(), at::kFloat);
  }
  torch_compat::set_cpu_autocast_dtype(at::kBFloat16);
  const torch::Tensor as_bf16 = torch::mm(a, b);
  torch_compat::set_cpu_autocast_enabled(false);
  EXPECT_FALSE(torch_compat::cpu_autocast_enabled());
  EXPECT_EQ(as_bf16.scalar_type(), at::kBFloat16);
  EXPECT_EQ(torch::mm(a, b).scalar_type(), at::kFloat);  // off again
}

}  // namespace
}  // namespace runtime
