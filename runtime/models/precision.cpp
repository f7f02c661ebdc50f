#include "runtime/models/precision.h"

#include <ATen/autocast_mode.h>

#include <stdexcept>

namespace runtime {

Precision parse_precision(const std::string& name) {
  if (name == "fp32") return Precision::kFp32;
  if (name == "bf16") return Precision::kBf16;
  throw std::invalid_argument("unknown precision '" + name + "' (expected fp32 or bf16)");
}

const char* to_string(Precision precision) {
  return precision == Precision::kBf16 ? "bf16" : "fp32";
}

PrecisionScope::PrecisionScope(Precision precision) {
  if (precision != Precision::kBf16) return;
  active_ = true;
  was_enabled_ = at::autocast::is_cpu_enabled();
  at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
  at::autocast::set_cpu_enabled(true);
  at::autocast::increment_nesting();
}

PrecisionScope::~PrecisionScope() {
  if (!active_) return;
  // Leaving the outermost scope: the bf16 copies of the weights autocast cached are stale.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  at::autocast::set_cpu_enabled(was_enabled_);
}

}  // namespace runtime
