#include "runtime/compat/torch_compat.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

namespace runtime::torch_compat {

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)

bool cpu_autocast_enabled() { return at::autocast::is_autocast_enabled(at::kCPU); }
void set_cpu_autocast_enabled(bool enabled) {
  at::autocast::set_autocast_enabled(at::kCPU, enabled);
}
void set_cpu_autocast_dtype(c10::ScalarType dtype) {
  at::autocast::set_autocast_dtype(at::kCPU, dtype);
}

#else

bool cpu_autocast_enabled() { return at::autocast::is_cpu_enabled(); }
void set_cpu_autocast_enabled(bool enabled) { at::autocast::set_cpu_enabled(enabled); }
void set_cpu_autocast_dtype(c10::ScalarType dtype) { at::autocast::set_autocast_cpu_dtype(dtype); }

#endif

}  // namespace runtime::torch_compat
