// float64 as torch's default dtype while one lives, float32 again after: the equality tests
// train in double precision where fp32 rounding would hide a wrong sum.
#pragma once

#include <torch/torch.h>

namespace runtime_test {

class DoubleDefault {
 public:
  DoubleDefault() { torch::set_default_dtype(caffe2::TypeMeta::Make<double>()); }
  ~DoubleDefault() { torch::set_default_dtype(caffe2::TypeMeta::Make<float>()); }
  DoubleDefault(const DoubleDefault&) = delete;
  DoubleDefault& operator=(const DoubleDefault&) = delete;
};

}  // namespace runtime_test
