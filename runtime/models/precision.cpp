#include "runtime/models/precision.h"

#include <ATen/autocast_mode.h>

#include <stdexcept>

#include "runtime/compat/torch_compat.h"
#include "runtime/device/cuda_support.h"

namespace runtime {

Precision parse_precision(const std::string& name) {
  if (name == "fp32") return Precision::kFp32;
  if (name == "tf32") return Precision::kTf32;
  if (name == "bf16") return Precision::kBf16;
  throw std::invalid_argument("unknown precision '" + name + "' (expected fp32, tf32 or bf16)");
}

const char* to_string(Precision precision) {
  switch (precision) {
    case Precision::kTf32:
      return "tf32";
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp32:
      break;
  }
  return "fp32";
}

void set_gpu_fp32_math(Precision precision) {
  const bool tf32 = precision == Precision::kTf32;
  cuda::set_fp32_math({tf32, tf32});
}

std::string observed_precision(c10::ScalarType forward_output, bool on_gpu) {
  if (forward_output == c10::kBFloat16) return "bf16";
  if (!on_gpu) return "fp32";
  const cuda::Fp32Math math = cuda::fp32_math();
  if (math.cudnn_tf32 && math.cublas_tf32) return "tf32";
  if (!math.cudnn_tf32 && !math.cublas_tf32) return "fp32";
  return math.cudnn_tf32 ? "fp32 with TF32 convolutions" : "fp32 with TF32 matmuls";
}

PrecisionScope::PrecisionScope(Precision precision, c10::DeviceType device) {
  if (precision != Precision::kBf16) return;
  active_ = true;
  on_cuda_ = device == c10::DeviceType::CUDA;
  if (on_cuda_) {
    was_enabled_ = cuda::set_bf16_autocast(true);
  } else {
    was_enabled_ = torch_compat::cpu_autocast_enabled();
    torch_compat::set_cpu_autocast_dtype(at::kBFloat16);
    torch_compat::set_cpu_autocast_enabled(true);
  }
  at::autocast::increment_nesting();
}

PrecisionScope::~PrecisionScope() {
  if (!active_) return;
  // Leaving the outermost scope: the bf16 copies of the weights autocast cached are stale.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  if (on_cuda_) {
    cuda::set_bf16_autocast(was_enabled_);
  } else {
    torch_compat::set_cpu_autocast_enabled(was_enabled_);
  }
}

}  // namespace runtime
