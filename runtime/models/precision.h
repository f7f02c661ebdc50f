// The math a rank trains in (`model.precision`). bf16 runs forward (and so backward) under
// LibTorch's autocast in bfloat16 on the rank's device -- matmuls, convolutions and linear
// layers compute in bf16, reductions and losses stay in fp32 -- while parameters, their
// gradients and the optimizer stay fp32 (master weights). fp32: IEEE fp32 everywhere (on a GPU
// the rank turns off the TF32 tensor-core math LibTorch's cuDNN uses by default). tf32 (GPUs
// only): fp32 tensors, convolutions and matmuls on TF32 tensor cores.
#pragma once

#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

#include <string>

#include "runtime/models/precision_kind.h"

namespace runtime {

// The precision a forward pass ran in, from what it produced and the math its device was set to:
// "bf16" when the model's output came out in bfloat16 (autocast was on), else on a GPU "tf32"
// when cuDNN and cuBLAS both use TF32, "fp32" when neither does, "fp32 with TF32 convolutions"
// when only cuDNN does (LibTorch's default); "fp32" on the CPU. A rank reports it for the
// harness to hold against model.precision.
std::string observed_precision(c10::ScalarType forward_output, bool on_gpu);

// Sets the GPU's fp32 math as a rank of `precision` runs it: TF32 for cuDNN and cuBLAS under
// tf32, IEEE fp32 under fp32 and bf16 (cuda::set_fp32_math; needs a CUDA LibTorch).
void set_gpu_fp32_math(Precision precision);

// bf16: autocast on `device`'s kind of tensor for as long as it lives (forward and loss); its cast
// weights are dropped at the end. The other precisions need no scope (tf32 is a setting of the
// rank's GPU math, cuda::set_fp32_math).
class PrecisionScope {
 public:
  explicit PrecisionScope(Precision precision, c10::DeviceType device = c10::DeviceType::CPU);
  ~PrecisionScope();
  PrecisionScope(const PrecisionScope&) = delete;
  PrecisionScope& operator=(const PrecisionScope&) = delete;

 private:
  bool active_ = false;
  bool on_cuda_ = false;
  bool was_enabled_ = false;
};

}  // namespace runtime
