// Mixed precision on CPU (issue 22, `model.precision`): bf16 runs forward (and so backward)
// under LibTorch's CPU autocast in bfloat16 -- matmuls, convolutions and linear layers compute
// in bf16, reductions and losses stay in fp32 -- while parameters, their gradients and the
// optimizer stay fp32 (master weights). fp32: nothing changes.
#pragma once

#include <string>

namespace runtime {

enum class Precision { kFp32, kBf16 };
Precision parse_precision(const std::string& name);  // fp32 | bf16
const char* to_string(Precision precision);

// Autocast for as long as it lives (forward and loss); its cast weights are dropped at the end.
class PrecisionScope {
 public:
  explicit PrecisionScope(Precision precision);
  ~PrecisionScope();
  PrecisionScope(const PrecisionScope&) = delete;
  PrecisionScope& operator=(const PrecisionScope&) = delete;

 private:
  bool active_ = false;
  bool was_enabled_ = false;
};

}  // namespace runtime
